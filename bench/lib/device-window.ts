// The bench's own view of the device over kvbench's measured window, so that a bench never judges
// kvbench by kvbench's numbers. kvbench counts its device over exactly its window (after any warm-up,
// before the drain) and reports the window's start and length; the bench samples /proc/diskstats for
// the device it finds itself (util-linux's findmnt, not kvbench's lookup), and the engine process's
// /proc/<pid>/io, every SAMPLE_INTERVAL_MS of the run, and reads the counters at the window's two ends
// off that series. A kvbench that chose the wrong device, or windowed its counters wrongly, then
// disagrees with the bench instead of agreeing with itself. What it takes from kvbench is the window's
// two instants, never a byte count.

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { DISKSTATS_SECTOR_BYTES, parseDiskstats, parseProcessReadBytes } from '../../src-main/engine/metrics/device-stats.ts';

/** Often enough that one interval at each end of a 10 s window is a fraction of a percent of it. */
export const SAMPLE_INTERVAL_MS = 50;

/** The block device holding `dir`, by its /proc/diskstats name, as findmnt sees the mount. */
export function deviceNameOf(dir: string): { name: string } | { reason: string } {
  let source: string;
  try {
    source = execFileSync('findmnt', ['-n', '-o', 'SOURCE', '--target', dir], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  } catch (err) {
    return { reason: `findmnt --target ${dir} failed: ${(err as Error).message.split('\n')[0]}` };
  }
  // btrfs names the subvolume after the device: /dev/sda2[/@home].
  source = source.replace(/\[.*\]$/, '');
  if (!source.startsWith('/dev/')) return { reason: `${dir} is on ${source || 'an unknown source'}, not a block device` };
  try {
    // /dev/mapper/x and /dev/disk/by-*/… are links to the node whose name diskstats uses (dm-0, vda1).
    return { name: path.basename(fs.realpathSync(source)) };
  } catch (err) {
    return { reason: `cannot resolve ${source}: ${(err as Error).message}` };
  }
}

interface Sample {
  unixNs: number;
  readBytes: number;
  writeBytes: number;
  /** The engine process's block-layer read bytes; null before it is found or after it has gone. */
  engineReadBytes: number | null;
}

export interface WindowSample {
  /** The device the bench sampled (its diskstats name), or null with `reason`. */
  device: string | null;
  reason: string | null;
  readBytes: number | null;
  writeBytes: number | null;
  /** What the engine process itself made the block layer read in the window (/proc/<pid>/io), or null with `engineReason`. */
  engineReadBytes: number | null;
  engineReason: string | null;
  /** The longest gap between the bench's samples around either end of the window: the uncertainty of the ends. */
  edgeGapMs: number | null;
}

const nowUnixNs = (): number => Math.round((performance.timeOrigin + performance.now()) * 1e6);

function readFile(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

/** The engine process under `rootPid`: a descendant (the CLI's child, or its grandchild behind the Node re-exec) running engine-process.ts. */
function findEngine(rootPid: number): number | null {
  const children = new Map<number, number[]>();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = readFile(`/proc/${name}/stat`);
    if (stat === null) continue;
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    children.set(ppid, [...(children.get(ppid) ?? []), Number(name)]);
  }
  const queue = [...(children.get(rootPid) ?? [])];
  for (let depth = 0; depth < 3 && queue.length > 0; depth++) {
    const next: number[] = [];
    for (const pid of queue) {
      if ((readFile(`/proc/${pid}/cmdline`) ?? '').includes('engine-process')) return pid;
      next.push(...(children.get(pid) ?? []));
    }
    queue.splice(0, queue.length, ...next);
  }
  return null;
}

/** Counters read at `t` off the series: linear between the samples around it; null outside the series. */
function at<K extends 'readBytes' | 'writeBytes' | 'engineReadBytes'>(samples: readonly Sample[], key: K, t: number): { value: number; gapMs: number } | null {
  const usable = samples.filter((s) => s[key] !== null);
  const after = usable.findIndex((s) => s.unixNs >= t);
  if (after <= 0) return after === 0 && usable[0].unixNs === t ? { value: usable[0][key]!, gapMs: 0 } : null;
  const a = usable[after - 1];
  const b = usable[after];
  const share = (t - a.unixNs) / (b.unixNs - a.unixNs);
  return { value: a[key]! + share * (b[key]! - a[key]!), gapMs: (b.unixNs - a.unixNs) / 1e6 };
}

/**
 * Samples one device (and, once found, the engine process under the run's root process) from
 * `start` until `stop`, then tells what moved between two instants of the run.
 */
export class DeviceTimeline {
  readonly #device: { name: string } | { reason: string };
  readonly #samples: Sample[] = [];
  #timer: ReturnType<typeof setInterval> | null = null;
  #rootPid = 0;
  #enginePid: number | null = null;

  constructor(dir: string) {
    this.#device = deviceNameOf(dir);
  }

  #sample(): void {
    if (!('name' in this.#device)) return;
    const line = parseDiskstats(readFile('/proc/diskstats') ?? '').get(this.#device.name);
    if (!line) return;
    this.#enginePid ??= findEngine(this.#rootPid);
    const io = this.#enginePid === null ? null : readFile(`/proc/${this.#enginePid}/io`);
    this.#samples.push({
      unixNs: nowUnixNs(),
      readBytes: line.counters.sectorsRead * DISKSTATS_SECTOR_BYTES,
      writeBytes: line.counters.sectorsWritten * DISKSTATS_SECTOR_BYTES,
      engineReadBytes: io === null ? null : parseProcessReadBytes(io),
    });
  }

  start(rootPid: number): void {
    this.#rootPid = rootPid;
    this.#sample();
    this.#timer = setInterval(() => this.#sample(), SAMPLE_INTERVAL_MS);
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    this.#sample();
  }

  /** What moved between `startUnixNs` and `endUnixNs` (kvbench's measured window). */
  window(startUnixNs: number, endUnixNs: number): WindowSample {
    if (!('name' in this.#device)) {
      return { device: null, reason: this.#device.reason, readBytes: null, writeBytes: null, engineReadBytes: null, engineReason: 'no device', edgeGapMs: null };
    }
    const name = this.#device.name;
    const r0 = at(this.#samples, 'readBytes', startUnixNs);
    const r1 = at(this.#samples, 'readBytes', endUnixNs);
    const w0 = at(this.#samples, 'writeBytes', startUnixNs);
    const w1 = at(this.#samples, 'writeBytes', endUnixNs);
    if (!r0 || !r1 || !w0 || !w1) {
      const why = this.#samples.length === 0 ? `${name} is not in /proc/diskstats` : 'the window is not inside the sampled run';
      return { device: name, reason: why, readBytes: null, writeBytes: null, engineReadBytes: null, engineReason: why, edgeGapMs: null };
    }
    const e0 = at(this.#samples, 'engineReadBytes', startUnixNs);
    const e1 = at(this.#samples, 'engineReadBytes', endUnixNs);
    const engineReason = e0 && e1 ? null : this.#enginePid === null ? 'the engine process was not found' : "the engine's /proc/<pid>/io does not span the window (it exited within a sample of the end?)";
    return {
      device: name,
      reason: null,
      readBytes: Math.max(0, r1.value - r0.value),
      writeBytes: Math.max(0, w1.value - w0.value),
      engineReadBytes: e0 && e1 ? Math.max(0, e1.value - e0.value) : null,
      engineReason,
      edgeGapMs: Math.max(r0.gapMs, r1.gapMs),
    };
  }
}
