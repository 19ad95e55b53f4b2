// The installed NVIDIA driver's version (e.g. "550.54.15"), which the driver API does not give
// (cuDriverGetVersion is the CUDA version it supports, and no driver version can be derived from
// it). Linux publishes it in /proc; where /proc/driver/nvidia is absent (gVisor and other
// sandboxes that pass the device through without the kernel module's files), nvidia-smi still
// knows it.

import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';

export const PROC_NVIDIA_VERSION = '/proc/driver/nvidia/version';
const NVIDIA_SMI_TIMEOUT_MS = 5000;

/** "550.54.15" from the kernel module's banner ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  …"). */
export function parseNvidiaProcVersion(text: string): string | null {
  const m = /Kernel Module(?:\s+for\s+\S+)?\s+(\d+(?:\.\d+)+)/.exec(text) ?? /NVRM version:.*?\s(\d+\.\d+(?:\.\d+)?)\s/.exec(text);
  return m ? m[1] : null;
}

/** The first GPU's line of `nvidia-smi --query-gpu=driver_version --format=csv,noheader`. */
export function parseNvidiaSmiDriverVersion(stdout: string): string | null {
  const first = stdout.split('\n').map((l) => l.trim()).find((l) => l !== '');
  return first !== undefined && /^\d+(?:\.\d+)+$/.test(first) ? first : null;
}

export interface DriverVersionSources {
  /** The kernel module's banner (default /proc/driver/nvidia/version). */
  procPath?: string;
  /** nvidia-smi to ask when the banner is missing; null asks nothing (tests). Default: "nvidia-smi" on the PATH. */
  nvidiaSmi?: string | null;
}

/** Null where neither source says (no driver, not Linux, no nvidia-smi). */
export async function readNvidiaDriverVersion(src: DriverVersionSources = {}): Promise<string | null> {
  try {
    const v = parseNvidiaProcVersion(await fs.readFile(src.procPath ?? PROC_NVIDIA_VERSION, 'utf8'));
    if (v !== null) return v;
  } catch {
    // absent or unreadable: ask nvidia-smi
  }
  const smi = src.nvidiaSmi === undefined ? 'nvidia-smi' : src.nvidiaSmi;
  if (smi === null) return null;
  let answer = smiAnswers.get(smi);
  if (!answer) smiAnswers.set(smi, (answer = askNvidiaSmi(smi)));
  return answer;
}

/**
 * nvidia-smi's answer, per executable, for the life of the process: it can take seconds, and a
 * bench or run opens the GPU tier several times while the installed driver cannot change.
 */
const smiAnswers = new Map<string, Promise<string | null>>();

function askNvidiaSmi(smi: string): Promise<string | null> {
  return new Promise((resolve) => {
    execFile(smi, ['--query-gpu=driver_version', '--format=csv,noheader'], { timeout: NVIDIA_SMI_TIMEOUT_MS, encoding: 'utf8' }, (err, stdout) =>
      resolve(err ? null : parseNvidiaSmiDriverVersion(stdout)),
    );
  });
}
