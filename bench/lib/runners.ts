// kvbench and fio, run the way the comparisons need them, with their numbers pulled out of their
// JSON. kvbench runs through its real CLI (bin/kvbench.js → engine process), so what is measured is
// what a user gets, CPU of both processes included.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { RunResults } from '../../src-shared/domain/results.ts';
import { DeviceTimeline, type WindowSample } from './device-window.ts';
import { KVBENCH_BIN, nodeBin, runMeasured, type ChildRun } from './measure.ts';
import { storageBytesOf } from './process-io.ts';
import type { ThrottleCgroup } from './targets.ts';

export interface KvbenchRun {
  run: ChildRun;
  results: RunResults;
  elapsedS: number;
  storageReadBytes: number;
  storageWriteBytes: number;
  storageReadBytesPerSec: number;
  storageWriteBytesPerSec: number;
  storageBytesPerSec: number;
  /** Storage read bytes ÷ (read + write bytes). */
  readFraction: number;
  /** Mean bytes per storage-tier operation (one entry read or written). */
  meanEntryBytes: number;
  /** CPU-seconds per GB of the process tree's own I/O (see cpuCostOf). */
  cpuSecondsPerGb: number;
  cost: CpuCost;
  tokensPerSec: number;
  decodeBytesRead: number;
  directIo: boolean;
  /** The bench's own sample of the device over kvbench's measured window, with the coverages it gives. */
  window: BenchWindow;
  lagP99Ns: number | null;
}

/**
 * Device and engine-process bytes over kvbench's measured window, as this bench sampled them
 * (bench/lib/device-window.ts), set against the storage tier's bytes. kvbench's own view of the same
 * window (results.kvbench.device_io, judged by its assessDevicePageCache) is a separate, cross-checking column.
 */
export interface BenchWindow {
  sample: WindowSample;
  /** Device read bytes ÷ storage-tier read bytes (null: nothing read, or no device sample). */
  readCoverage: number | null;
  writeCoverage: number | null;
  /** The engine process's own block-layer reads ÷ storage-tier read bytes: what other processes on the drive cannot inflate. */
  engineReadCoverage: number | null;
}

/**
 * CPU cost per GB (10⁹ bytes): CPU-seconds of the whole process tree ÷ the block-layer bytes that
 * same process tree moved (its own I/O, bench/lib/process-io.ts), both over the whole run, so each
 * tool is judged by the same ruler whatever part of the run its own statistics cover (kvbench's
 * --warm-up, fio's ramp_time). `perDeviceGb` divides by all the device moved meanwhile instead:
 * shown for context only, as other processes' I/O on a shared device (0.1–6.6 GB per run seen on
 * vda) moves it; it also holds the file system's journal and metadata writes, which the own-I/O
 * figure leaves out. NaN where a count is missing, never another count in its place.
 */
export interface CpuCost {
  cpuSeconds: number;
  /** The verdict's figure: ÷ the tool's own block-layer bytes. */
  perGb: number;
  ownIoBytes: number | null;
  /** Context: ÷ every byte the device moved during the run, any process's. */
  perDeviceGb: number;
  deviceBytes: number | null;
}

export function cpuCostOf(run: ChildRun): CpuCost {
  const cpuSeconds = run.cpuUserS + run.cpuSystemS;
  const ownIoBytes = run.ownIo.io === null ? null : storageBytesOf(run.ownIo.io);
  const io = run.device.io;
  const deviceBytes = io ? io.readBytes + io.writeBytes : null;
  const per = (bytes: number | null): number => (bytes !== null && bytes > 0 ? cpuSeconds / (bytes / 1e9) : Number.NaN);
  return { cpuSeconds, perGb: per(ownIoBytes), ownIoBytes, perDeviceGb: per(deviceBytes), deviceBytes };
}

export async function runKvbench(args: readonly string[], opts: { deviceDir: string; cgroup?: ThrottleCgroup | null; tag: string }): Promise<KvbenchRun> {
  const out = path.join(os.tmpdir(), `kvb-bench-${process.pid}-${opts.tag}.json`);
  fs.rmSync(out, { force: true });
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  const timeline = new DeviceTimeline(opts.deviceDir);
  const run = await runMeasured(nodeBin(), [KVBENCH_BIN, 'run', ...args, '--output', out], {
    env,
    cgroup: opts.cgroup,
    deviceDir: opts.deviceDir,
    watch: (pid) => {
      timeline.start(pid);
      return () => timeline.stop();
    },
  });
  if (run.code !== 0 || !fs.existsSync(out)) {
    throw new Error(`kvbench run ${args.join(' ')} failed (exit ${run.code}, signal ${run.signal}):\n${run.stderr.slice(-3000)}`);
  }
  const results = JSON.parse(fs.readFileSync(out, 'utf8')) as RunResults;
  fs.rmSync(out, { force: true });
  const k = results.kvbench;
  const s = k.tier_bytes.storage;
  const elapsedS = k.elapsed_ns / 1e9;
  const moved = s.read_bytes + s.write_bytes;
  const cost = cpuCostOf(run);
  const w = k.measured_window;
  const sample = timeline.window(w.started_unix_ns, w.started_unix_ns + w.elapsed_ns);
  const per = (bytes: number | null, of: number): number | null => (bytes === null || of <= 0 ? null : bytes / of);
  return {
    run,
    results,
    elapsedS,
    storageReadBytes: s.read_bytes,
    storageWriteBytes: s.write_bytes,
    storageReadBytesPerSec: s.read_bytes_per_sec,
    storageWriteBytesPerSec: s.write_bytes_per_sec,
    storageBytesPerSec: s.read_bytes_per_sec + s.write_bytes_per_sec,
    readFraction: moved > 0 ? s.read_bytes / moved : 0,
    meanEntryBytes: s.read_ops + s.write_ops > 0 ? moved / (s.read_ops + s.write_ops) : 0,
    cpuSecondsPerGb: cost.perGb,
    cost,
    tokensPerSec: results.summary?.avg_throughput_tokens_per_sec ?? 0,
    decodeBytesRead: k.primary.decode_bytes_read,
    directIo: k.tiers.storage.direct_io ?? false,
    // Over the window only: the whole run's bytes (warm-up and drain included) against the window's
    // storage bytes made a 15 s warm-up's 20 s window read coverage 1.68.
    window: {
      sample,
      readCoverage: per(sample.readBytes, s.read_bytes),
      writeCoverage: per(sample.writeBytes, s.write_bytes),
      engineReadCoverage: per(sample.engineReadBytes, s.read_bytes),
    },
    lagP99Ns: k.engine_health?.event_loop_lag_ns?.p99 ?? null,
  };
}

export interface FioSpec {
  /** Directory fio works in (its own; created and emptied by the caller). */
  dir: string;
  blockBytes: number;
  jobs: number;
  /** Share of I/Os that are reads, 0..100 (100: rw=read; 0: rw=write; else rw=rw). */
  readPercent: number;
  runtimeS: number;
  /** Seconds run before fio's statistics start (ramp_time), as kvbench's --warm-up. */
  rampS?: number;
  fileBytes: number;
  /** fdatasync after this many writes (the engine syncs once per entry); 0 = never. */
  fdatasyncEvery: number;
  ioengine: 'psync' | 'libaio';
  /** libaio only: I/Os in flight per job. */
  iodepth?: number;
  /**
   * How a read/write mix is laid out over the jobs. mixed: every job does rw=rw with the mix (each
   * job's reads then wait behind its own fdatasync); split: reader jobs and writer jobs, in the mix's
   * proportion (at least one of each), fdatasync on the writers only, so no read waits for a flush —
   * the mix then follows from the device's read and write speeds. Pure reads or writes: the same.
   */
  layout?: 'mixed' | 'split';
  /**
   * Which files pure writes go to. laid-out (the default): the jobs' files, written once by
   * layOutFioFiles before the measured run, which then overwrites blocks that are allocated and
   * written. per-entry: what kvbench's storage tier does, a new file per entry: each job creates
   * `fileBytes` files one after another (--create_on_open, --openfiles=1,
   * --file_service_type=sequential, --fallocate=none), each opened O_CREAT, written chunk by chunk,
   * fdatasynced after its last chunk (--fdatasync=<chunks per file>) and closed, so fio pays the same
   * block allocation and new-file metadata writes per entry. Each job has `filesPerJob` names; once
   * it has written them all it removes them and starts over (--loops, --unlink_each_loop), as
   * kvbench evicts once its tier is full, and fio opens each loop with one extra fdatasync of the
   * empty first file. Reads and mixes always use laid-out files (a read needs an existing file).
   */
  files?: 'laid-out' | 'per-entry';
  /** per-entry only: file names per job (each fileBytes long), i.e. files written before fio removes and rewrites them. */
  filesPerJob?: number;
}

/** Pure writes into a new file per entry (FioSpec.files). */
export const isPerEntry = (spec: FioSpec): boolean => spec.files === 'per-entry' && spec.readPercent <= 0;

/** Reader and writer jobs of a split layout: the mix's share of the jobs, at least one of each. */
export function splitJobs(spec: Pick<FioSpec, 'jobs' | 'readPercent'>): { readers: number; writers: number } {
  const readers = Math.min(spec.jobs - 1, Math.max(1, Math.round((spec.jobs * spec.readPercent) / 100)));
  return { readers, writers: spec.jobs - readers };
}

const isSplit = (spec: FioSpec): boolean => spec.layout === 'split' && spec.readPercent > 0 && spec.readPercent < 100 && spec.jobs >= 2;

export interface FioRun {
  run: ChildRun;
  readBytes: number;
  writeBytes: number;
  readBytesPerSec: number;
  writeBytesPerSec: number;
  bytesPerSec: number;
  /** CPU-seconds per GB of the process tree's own I/O (see cpuCostOf). */
  cpuSecondsPerGb: number;
  cost: CpuCost;
  commandLine: string;
  /** Milliseconds fio measured (ramp excluded): short of the runtime asked means it stopped early. */
  runtimeMs: number;
}

/**
 * fio's arguments: the options every job shares and `global` (both before the first --name, where fio
 * takes them for all jobs), `extra`, then the jobs. Job names are file names: the mixed layout's jobs
 * (and the split layout's readers) use kvb.N.0, the split layout's writers kvbw.N.0.
 */
function fioArgs(spec: FioSpec, extra: string[], global: string[] = [], jobName = 'kvb'): string[] {
  const files = isPerEntry(spec)
    ? [
        `--filesize=${spec.fileBytes}`, `--nrfiles=${Math.max(1, spec.filesPerJob ?? 1)}`, '--openfiles=1', '--file_service_type=sequential',
        '--create_on_open=1', '--fallocate=none', '--unlink=1', '--unlink_each_loop=1', '--loops=1000000',
      ]
    : [`--size=${spec.fileBytes}`];
  const common = [`--directory=${spec.dir}`, '--direct=1', `--bs=${spec.blockBytes}`, `--ioengine=${spec.ioengine}`, ...files, '--group_reporting'];
  if (spec.ioengine === 'libaio') common.push(`--iodepth=${spec.iodepth ?? 1}`);
  const sync = spec.fdatasyncEvery > 0 && spec.readPercent < 100 ? [`--fdatasync=${spec.fdatasyncEvery}`] : [];
  if (isSplit(spec)) {
    const { readers, writers } = splitJobs(spec);
    return [...common, ...global, ...extra, '--name=kvb', '--rw=read', `--numjobs=${readers}`, '--name=kvbw', '--rw=write', `--numjobs=${writers}`, ...sync];
  }
  const rw = spec.readPercent >= 100 ? 'read' : spec.readPercent <= 0 ? 'write' : 'rw';
  const mix = rw === 'rw' ? [`--rwmixread=${Math.round(spec.readPercent)}`] : [];
  return [...common, ...global, ...extra, `--name=${jobName}`, `--rw=${rw}`, `--numjobs=${spec.jobs}`, ...mix, ...sync];
}

/** Writes the job files once, unmeasured, so the measured run neither lays them out nor pays for it. */
export async function layOutFioFiles(spec: FioSpec, deviceDir: string): Promise<void> {
  // A new file per entry: nothing exists before the run, as for kvbench.
  if (isPerEntry(spec)) return;
  const files: { name: string; jobs: number }[] = [{ name: 'kvb', jobs: spec.jobs }];
  if (isSplit(spec)) files.push({ name: 'kvbw', jobs: splitJobs(spec).writers });
  for (const f of files) {
    const args = fioArgs({ ...spec, layout: 'mixed', readPercent: 0, fdatasyncEvery: 0, jobs: f.jobs }, ['--output-format=terse'], [], f.name);
    const r = await runMeasured('fio', args, { deviceDir });
    if (r.code !== 0) throw new Error(`fio layout failed: ${r.stderr.slice(-2000)}`);
  }
}

export async function runFio(spec: FioSpec, opts: { deviceDir: string; cgroup?: ThrottleCgroup | null }): Promise<FioRun> {
  const out = path.join(os.tmpdir(), `kvb-bench-fio-${process.pid}.json`);
  fs.rmSync(out, { force: true });
  // time_based would wrap around and overwrite the first file; per-entry jobs loop over new files
  // instead (--loops), and --runtime stops them.
  const global = isPerEntry(spec) ? [`--runtime=${spec.runtimeS}`] : ['--time_based', `--runtime=${spec.runtimeS}`];
  if (spec.rampS && spec.rampS > 0) global.push(`--ramp_time=${spec.rampS}`);
  const args = fioArgs(spec, ['--output-format=json', `--output=${out}`], global);
  const run = await runMeasured('fio', args, { deviceDir: opts.deviceDir, cgroup: opts.cgroup });
  if (run.code !== 0 || !fs.existsSync(out)) throw new Error(`fio ${args.join(' ')} failed (exit ${run.code}):\n${run.stderr.slice(-2000)}`);
  const j = JSON.parse(fs.readFileSync(out, 'utf8')) as {
    jobs: Array<{ error: number; read: { io_bytes: number; bw_bytes: number; runtime: number }; write: { io_bytes: number; bw_bytes: number; runtime: number } }>;
  };
  fs.rmSync(out, { force: true });
  const job = j.jobs[0];
  if (job.error !== 0) throw new Error(`fio reported error ${job.error} (errno) for ${args.join(' ')}`);
  const cost = cpuCostOf(run);
  return {
    run,
    readBytes: job.read.io_bytes,
    writeBytes: job.write.io_bytes,
    readBytesPerSec: job.read.bw_bytes,
    writeBytesPerSec: job.write.bw_bytes,
    bytesPerSec: job.read.bw_bytes + job.write.bw_bytes,
    cpuSecondsPerGb: cost.perGb,
    cost,
    commandLine: `fio ${args.filter((a) => !a.startsWith('--output')).join(' ')}`,
    runtimeMs: Math.max(job.read.runtime ?? 0, job.write.runtime ?? 0),
  };
}
