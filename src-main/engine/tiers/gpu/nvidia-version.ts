// The installed NVIDIA driver's version (e.g. "550.54.15"), which the driver API does not give
// (cuDriverGetVersion is the CUDA version it supports): Linux publishes it in /proc.

import fs from 'node:fs/promises';

export const PROC_NVIDIA_VERSION = '/proc/driver/nvidia/version';

/** "550.54.15" from the kernel module's banner ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  …"). */
export function parseNvidiaProcVersion(text: string): string | null {
  const m = /Kernel Module(?:\s+for\s+\S+)?\s+(\d+(?:\.\d+)+)/.exec(text) ?? /NVRM version:.*?\s(\d+\.\d+(?:\.\d+)?)\s/.exec(text);
  return m ? m[1] : null;
}

/** Null where the file is absent (no driver, not Linux) or unreadable. */
export async function readNvidiaDriverVersion(procPath = PROC_NVIDIA_VERSION): Promise<string | null> {
  try {
    return parseNvidiaProcVersion(await fs.readFile(procPath, 'utf8'));
  } catch {
    return null;
  }
}
