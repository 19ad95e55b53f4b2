// Engine efficiency and CPU cost: kvbench against fio, side by side, alternating, on the same
// directory, with the same block size, read/write mix and I/Os in flight.
//
//   node bench/engine-vs-fio.ts [--targets ram,disk] [--workloads read,write] [--reps 3]
//        [--duration 20] [--warm-up 15] [--read-model tiny-1b] [--write-model llama3.1-8b] [--users 16] [--io-depth 16] [--io-chunk-mib 16]
//        [--ram-image-gib 6] [--disk-parent /var/tmp] [--seed 1] [--json FILE]
//
// For each target (a RAM-backed loop device; the machine's own disk) and workload:
// Both tools measure after the same warm-up (kvbench --warm-up, fio --ramp_time): from a cold start
// every user's first request is a multi-GiB prefill write, so a window that opens at once measures
// a write burst, different from run to run (read shares of 18 % to 78 % were seen), not the
// read-heavy steady state. Read-heavy runs tiny-1b, so the users' entries fit on the 6 GiB RAM
// device: with llama3.1-8b's (up to 3 GiB each) the storage tier thrashes there, decode reads miss
// and are written again, and "read-heavy" runs wrote 98 % of their bytes. Its smaller entries
// (12–600 MB) are also the harder case for kvbench: more opens, closes and fdatasyncs per byte.
// Write-heavy runs llama3.1-8b: nothing is read back, so eviction does no harm, and tiny-1b's users
// offer less than the device takes (their open-loop arrivals, not the device, set the rate: a
// comparison of arrival rates, not engines). Either way, the device queue depth is printed beside
// fio's: a much shallower queue means the workload, not kvbench or the device, was the limit.
//   read-heavy:  kvbench run --cpu-mem-gb 0 --gpu-mem-gb 0 --generation-mode none (storage only)
//   write-heavy: the same with --prefill-only --disable-multi-turn (prefill writes only)
// after one unmeasured warm-up run, each repetition runs kvbench and fio, the first tool alternating
// (K F, F K, K F, …), fio with the read/write mix of the kvbench run it is paired with:
//   fio --direct=1 --bs=<chunk> --ioengine=psync --numjobs=<io-depth> --rw=read|write|rw
//       --rwmixread=<kvbench's measured read share> --size=<kvbench's mean entry size>
//       --fdatasync=<chunks per entry> (the engine fdatasyncs once per entry) --time_based
// and, for a mix of reads and writes, fio a second time with the same jobs split into readers and
// writers in the mix's proportion (fdatasync on the writers only): in the mixed layout each job's
// reads wait behind its own fdatasync, which kvbench's reads do not, so fio is measured both ways and
// kvbench is compared with the faster of the two. For pure writes fio also runs a second time doing
// what kvbench's storage tier does, a new file per entry (open O_CREAT, write, fdatasync, close:
// --create_on_open --nrfiles --openfiles=1 --file_service_type=sequential --fallocate=none, files
// removed and rewritten once each job has used its share of the free space, as kvbench evicts),
// and kvbench is compared with that run: fio's laid-out files are overwritten in place, which on a
// file system costs no block allocation and no new-file metadata at each fdatasync (on the VM's
// disk, about 0.7–0.8× of the overwrite rate for fio itself); the ratio to the laid-out run is printed as a
// reference. It prints kvbench storage bytes/s ÷ fio bytes/s
// (the fio of the same work), and CPU-seconds per GB (10⁹ bytes) moved for
// both (CPU of the whole process tree: kvbench CLI + engine; fio + its jobs; ÷ the block-layer bytes
// of that same process tree, /proc/<pid>/io summed as the kernel reaps them (bench/lib/process-io.ts),
// over the same whole run, so warm-up and ramp count on both sides of the fraction). The verdict uses
// that own-I/O figure: the device's count (/proc/diskstats) holds every process's I/O, and other
// sessions on this shared machine put 0.1–6.6 GB on vda within one run, which moved both tools'
// ratios with load that was neither's. The device-wide figure is printed beside it, labelled, for
// context (it also holds the file system's journal and metadata writes). Device bytes from
// /proc/diskstats, sampled by this bench over kvbench's measured window (bench/lib/device-window.ts),
// are shown beside kvbench's storage bytes (read coverage: device ÷ engine); kvbench's own device
// counters are never what the coverage is judged by. The device's queue is also shown as MiB in flight
// (average requests in flight × average request size): the request count alone misleads, as the
// tools' requests differ in size (0.5–4 MiB for the same 16 MiB writes).
// Targets: efficiency ≥ 0.90 (median of the repetitions), kvbench ≤ 0.15 CPU-s/GB, coverage ≥ 0.95.
// Needs root (loop device) and fio. Cleans up on every exit path.

import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { cleanupAll } from './lib/cleanup.ts';
import { KVBENCH_BIN, nodeBin, runMeasured, waitForQuiet, type ChildRun } from './lib/measure.ts';
import { layOutFioFiles, runFio, runKvbench, type CpuCost, type FioRun, type FioSpec, type KvbenchRun } from './lib/runners.ts';
import { fmt, fmtSpread, spread, table } from './lib/stats.ts';
import { machineLine, requireFio, setupDiskTarget, setupRamTarget, type BenchTarget } from './lib/targets.ts';

const { values } = parseArgs({
  options: {
    targets: { type: 'string', default: 'ram,disk' },
    workloads: { type: 'string', default: 'read,write' },
    reps: { type: 'string', default: '3' },
    duration: { type: 'string', default: '20' },
    'warm-up': { type: 'string', default: '15' },
    'read-model': { type: 'string', default: 'tiny-1b' },
    'write-model': { type: 'string', default: 'llama3.1-8b' },
    users: { type: 'string', default: '16' },
    'io-depth': { type: 'string', default: '16' },
    'io-chunk-mib': { type: 'string', default: '16' },
    'ram-image-gib': { type: 'string', default: '6' },
    'disk-parent': { type: 'string', default: '/var/tmp' },
    'probe-duration': { type: 'string', default: '8' },
    seed: { type: 'string', default: '1' },
    'quiet-wait': { type: 'string', default: '90' },
    json: { type: 'string' },
  },
});

const reps = Number(values.reps);
const durationS = Number(values.duration);
const ioDepth = Number(values['io-depth']);
const chunkBytes = Number(values['io-chunk-mib']) * 1024 * 1024;
const EFFICIENCY_TARGET = 0.9;
const CPU_TARGET_S_PER_GB = 0.15;
const COVERAGE_TARGET = 0.95;
// Below this, kvbench's reads are too few for coverage to mean anything: the bench's device sample
// also holds other processes' reads, so 8 MB read by a write-only job gave coverage 1.4–46.
const COVERAGE_MIN_READ_BYTES = 1e9;
/** The issue asks for at least three alternations: fewer (failed runs left out) give numbers, not a verdict. */
const MIN_ALTERNATIONS = 3;
function verdict(ok: boolean, n: number): string {
  return n < MIN_ALTERNATIONS ? `NO VERDICT (${n} of ${MIN_ALTERNATIONS} alternations)` : ok ? 'PASS' : 'MISS';
}

interface Workload {
  name: 'read' | 'write';
  label: string;
  model: string;
  extraArgs: string[];
}
const WORKLOADS: Workload[] = [
  { name: 'read', label: 'read-heavy (storage only, generation none)', model: values['read-model']!, extraArgs: [] },
  { name: 'write', label: 'write-heavy (--prefill-only --disable-multi-turn)', model: values['write-model']!, extraArgs: ['--prefill-only', '--disable-multi-turn'] },
];

interface Rep {
  rep: number;
  order: string;
  k: KvbenchRun;
  /** fio as the mix says (rw=rw in every job), and split into reader and writer jobs (mixes only). */
  fMixed: FioRun;
  fSplit: FioRun | null;
  /** Pure writes: fio writing a new file per entry, as kvbench does (null for reads and mixes). */
  fNew: FioRun | null;
  /** fNew where there is one, else the faster of fMixed and fSplit: what kvbench is compared with. */
  f: FioRun;
  ratio: number;
  /** The machine was quiet before both runs of the pair. */
  quiet: boolean;
}

function kvArgs(dir: string, w: Workload): string[] {
  return [
    '--model', w.model, '--num-users', values.users!, '--duration', String(durationS), '--warm-up', values['warm-up']!,
    '--gpu-mem-gb', '0', '--cpu-mem-gb', '0', '--generation-mode', 'none',
    '--io-depth', String(ioDepth), '--io-chunk-mib', values['io-chunk-mib']!,
    '--seed', values.seed!, '--cache-dir', dir, ...w.extraArgs,
  ];
}

function fioSpecFrom(dir: string, k: KvbenchRun): FioSpec {
  const free = fs.statfsSync(dir);
  const freeBytes = Number(free.bavail) * Number(free.bsize);
  // Files like kvbench's entries, as long as all jobs' files fit in half the free space.
  const cap = Math.floor((freeBytes * 0.5) / ioDepth);
  const fileBytes = Math.max(chunkBytes, Math.floor(Math.min(k.meanEntryBytes, cap) / chunkBytes) * chunkBytes);
  // A new file per entry: every job's files together fill up to 90 % of the free space before fio
  // removes them and starts over (kvbench's storage tier takes 95 % of it before it evicts).
  const filesPerJob = Math.max(1, Math.floor((freeBytes * 0.9) / (ioDepth * fileBytes)));
  // The same mix to the percent fio takes (a run with a few MB of reads among 100 GB of writes is pure write).
  const readPercent = Math.round(k.readFraction * 100);
  return {
    dir: path.join(dir, 'fio'),
    blockBytes: chunkBytes,
    jobs: ioDepth,
    readPercent,
    runtimeS: durationS,
    rampS: Number(values['warm-up']),
    fileBytes,
    fdatasyncEvery: Math.max(1, Math.round(fileBytes / chunkBytes)),
    ioengine: 'psync',
    filesPerJob,
  };
}

/** Other sessions share this machine: each measured run starts once it has been quiet a moment. */
const quietLog: boolean[] = [];
async function quiet(target: BenchTarget): Promise<void> {
  quietLog.push((await waitForQuiet({ deviceDir: target.dir, maxWaitS: Number(values['quiet-wait']) })).quiet);
}

async function kvRep(target: BenchTarget, w: Workload, tag: string): Promise<KvbenchRun> {
  await quiet(target);
  return runKvbench(kvArgs(target.dir, w), { deviceDir: target.dir, tag });
}

type FioRuns = { fMixed: FioRun; fSplit: FioRun | null; fNew: FioRun | null };

/**
 * fio in the mixed layout (laid-out files), then for a mix of reads and writes in the split layout,
 * for pure writes with a new file per entry.
 */
async function fioPair(target: BenchTarget, spec: FioSpec): Promise<FioRuns> {
  const fMixed = await fioRep(target, { ...spec, layout: 'mixed', files: 'laid-out' });
  const mix = spec.readPercent > 0 && spec.readPercent < 100;
  const fSplit = mix ? await fioRep(target, { ...spec, layout: 'split', files: 'laid-out' }) : null;
  const fNew = spec.readPercent <= 0 ? await fioRep(target, { ...spec, layout: 'mixed', files: 'per-entry' }) : null;
  return { fMixed, fSplit, fNew };
}

async function fioRep(target: BenchTarget, spec: FioSpec): Promise<FioRun> {
  fs.mkdirSync(spec.dir, { recursive: true });
  try {
    await layOutFioFiles(spec, target.dir);
    await quiet(target);
    return await runFio(spec, { deviceDir: target.dir });
  } finally {
    // kvbench sizes its storage tier from the free space: leave it all to the next run.
    fs.rmSync(spec.dir, { recursive: true, force: true });
  }
}

async function probe(target: BenchTarget): Promise<{ readBps: number; writeBps: number; line: string } | null> {
  await waitForQuiet({ deviceDir: target.dir, maxWaitS: Number(values['quiet-wait']) });
  const r = await runMeasured(
    nodeBin(),
    [KVBENCH_BIN, 'probe', '--dir', target.dir, '--json', '--duration', values['probe-duration']!, '--io-depth', String(ioDepth), '--io-chunk-mib', values['io-chunk-mib']!],
    { deviceDir: target.dir },
  );
  if (r.code !== 0) {
    console.log(`probe failed (exit ${r.code}): ${r.stderr.trim().split('\n').slice(-3).join(' | ')}`);
    return null;
  }
  const j = JSON.parse(r.stdout) as { phases: { read?: { bytes_per_sec: number; cpu_seconds_per_gb: number }; write?: { bytes_per_sec: number; cpu_seconds_per_gb: number } } };
  const readBps = j.phases.read?.bytes_per_sec ?? 0;
  const writeBps = j.phases.write?.bytes_per_sec ?? 0;
  return {
    readBps,
    writeBps,
    line: `raw limit (kvbench probe, sequential direct, ${ioDepth} × ${values['io-chunk-mib']} MiB in flight): write ${fmt(writeBps / 1e9)} GB/s, read ${fmt(readBps / 1e9)} GB/s`,
  };
}

/** The probe limit for a mix: time-weighted (harmonic) combination of the read and write limits. */
function mixLimit(p: { readBps: number; writeBps: number }, readFraction: number): number {
  const t = readFraction / p.readBps + (1 - readFraction) / p.writeBps;
  return t > 0 ? 1 / t : 0;
}

interface Summary {
  target: string;
  workload: string;
  ratio: ReturnType<typeof spread>;
  ratioMixed: ReturnType<typeof spread>;
  ratioSplit: ReturnType<typeof spread> | null;
  /** Pure writes: kvbench ÷ fio overwriting laid-out files (a reference; the verdict is against a new file per entry). */
  ratioLaidOut: ReturnType<typeof spread> | null;
  /** CPU-s per GB of each tool's own I/O: what the verdict uses. */
  kCpu: ReturnType<typeof spread>;
  fCpu: ReturnType<typeof spread>;
  cpuRatio: ReturnType<typeof spread>;
  /** The same ÷ every byte the device moved (other processes' included): context only. */
  kCpuDevice: ReturnType<typeof spread>;
  fCpuDevice: ReturnType<typeof spread>;
  coverage: ReturnType<typeof spread>;
  vsProbe: ReturnType<typeof spread> | null;
}

async function benchTarget(target: BenchTarget, summaries: Summary[], raw: unknown[]): Promise<void> {
  console.log(`\n=== target: ${target.kind} — ${target.description}`);
  const p = await probe(target);
  if (p) console.log(p.line);
  for (const w of WORKLOADS.filter((x) => values.workloads!.split(',').includes(x.name))) {
    console.log(`\n--- ${w.label}`);
    console.log(`kvbench run ${kvArgs(target.dir, w).join(' ')}`);
    const rows: Rep[] = [];
    // Unmeasured: a fresh device (and a fresh file system's allocator) is slower for the first run
    // after setup; whichever tool ran first would pay for it.
    const warm = await kvRep(target, w, `${target.kind}-${w.name}-warm-up`).catch((err: Error) => err);
    console.log(warm instanceof Error ? `warm-up run failed: ${warm.message.split('\n')[0]}` : `warm-up run (not measured): kvbench ${fmt(warm.storageBytesPerSec / 1e9)} GB/s`);
    let lastMix: KvbenchRun | null = warm instanceof Error ? null : warm;
    for (let rep = 1; rep <= reps; rep++) {
      // Pairs alternate which tool goes first (K F, F K, K F, …) so drift hits both alike. fio takes
      // the read/write mix of the kvbench run it is paired with: measured just before it, or, when
      // fio goes first, the previous kvbench run of this workload (the mix of a storage-only run
      // depends on its cache's hits and misses, and stays within a few percent between runs).
      const fioFirst = rep % 2 === 0 && lastMix !== null;
      let k: KvbenchRun;
      let fios: FioRuns;
      try {
        if (fioFirst) {
          fios = await fioPair(target, fioSpecFrom(target.dir, lastMix!));
          k = await kvRep(target, w, `${target.kind}-${w.name}-${rep}`);
        } else {
          k = await kvRep(target, w, `${target.kind}-${w.name}-${rep}`);
          fios = await fioPair(target, fioSpecFrom(target.dir, k));
        }
      } catch (err) {
        // A failed run is reported and left out; the other alternations still count.
        console.log(`rep ${rep}: failed, left out: ${(err as Error).message.split('\n').filter((l) => /error|failed/i.test(l)).slice(0, 2).join(' | ')}`);
        raw.push({ target: target.kind, workload: w.name, rep, failed: (err as Error).message });
        continue;
      }
      lastMix = k;
      const { fMixed, fSplit, fNew } = fios;
      const f = fNew ?? (fSplit && fSplit.bytesPerSec > fMixed.bytesPerSec ? fSplit : fMixed);
      const wasQuiet = quietLog.slice(-(2 + (fSplit ? 1 : 0) + (fNew ? 1 : 0))).every(Boolean);
      if (rep === 1) for (const x of [fMixed, fSplit, fNew]) if (x) console.log(x.commandLine.replace(target.dir, '<dir>'));
      // fio stops before --runtime when a job fails or runs out of files (it should not: it loops).
      if (fNew && fNew.runtimeMs < 0.95 * durationS * 1000) console.log(`rep ${rep}: fio (new file per entry) measured only ${fmt(fNew.runtimeMs / 1000, 1)} of ${durationS} s`);
      const order = fioFirst ? 'fio, kvbench' : 'kvbench, fio';
      rows.push({ rep, order, k, fMixed, fSplit, fNew, f, ratio: k.storageBytesPerSec / f.bytesPerSec, quiet: wasQuiet });
      raw.push({ target: target.kind, workload: w.name, rep, order, quiet_before_all: wasQuiet, kvbench: summariseK(k), fio: summariseF(fMixed), fio_split: fSplit ? summariseF(fSplit) : null, fio_new_file_per_entry: fNew ? summariseF(fNew) : null });
    }
    const readPct = (x: FioRun): string => fmt((100 * x.readBytes) / Math.max(1, x.readBytes + x.writeBytes), 1);
    const header = ['rep', 'order', 'kvb R GB/s', 'kvb W GB/s', 'kvb GB/s', 'read %', 'kvb CPU-s/GB', 'dev R cov', 'dev W cov', 'fio GB/s', 'fio read %', 'fio split GB/s', 'split read %', 'fio new-file GB/s', 'fio CPU-s/GB', 'kvb CPU-s/dev GB', 'fio CPU-s/dev GB', 'kvb own ÷ dev B', 'fio own ÷ dev B', 'kvb aqu', 'fio aqu', 'kvb MiB queued', 'fio MiB queued', 'kvb ÷ fio', 'kvb ÷ laid-out fio', 'quiet'];
    if (p) header.push('kvb ÷ probe');
    console.log(
      table([
        header,
        ...rows.map((r) => {
          const row = [
            String(r.rep), r.order,
            fmt(r.k.storageReadBytesPerSec / 1e9), fmt(r.k.storageWriteBytesPerSec / 1e9), fmt(r.k.storageBytesPerSec / 1e9),
            fmt(r.k.readFraction * 100, 1), fmt(r.k.cpuSecondsPerGb, 3),
            fmt(r.k.window.readCoverage, 3), fmt(r.k.window.writeCoverage, 3),
            fmt(r.fMixed.bytesPerSec / 1e9), readPct(r.fMixed),
            r.fSplit ? fmt(r.fSplit.bytesPerSec / 1e9) : '-', r.fSplit ? readPct(r.fSplit) : '-',
            r.fNew ? fmt(r.fNew.bytesPerSec / 1e9) : '-', fmt(r.f.cpuSecondsPerGb, 3),
            fmt(r.k.cost.perDeviceGb, 3), fmt(r.f.cost.perDeviceGb, 3), fmt(ownShare(r.k.cost), 3), fmt(ownShare(r.f.cost), 3),
            fmt(kvAqu(r.k), 0), fmt(aqu(r.f.run), 0), fmt(kvQueuedMiB(r.k), 0), fmt(queuedMiB(r.f.run), 0),
            fmt(r.ratio, 3), r.fNew ? fmt(r.k.storageBytesPerSec / r.fMixed.bytesPerSec, 3) : '-', r.quiet ? 'yes' : 'no',
          ];
          if (p) row.push(fmt(r.k.storageBytesPerSec / mixLimit(p, r.k.readFraction), 3));
          return row;
        }),
      ]),
    );
    for (const r of rows) {
      // kvbench's own flag, as a cross-check (on the RAM target it flags every run as RAM-backed, rightly).
      if (r.k.results.kvbench.device_io.flagged) console.log(`  rep ${r.rep} kvbench flagged: ${r.k.results.kvbench.device_io.flag_reason}`);
      if (r.k.window.sample.reason) console.log(`  rep ${r.rep}: no device sample of the bench's own: ${r.k.window.sample.reason}`);
      for (const [tool, run] of [['kvbench', r.k.run], ['fio', r.f.run]] as const) {
        if (run.ownIo.reason) console.log(`  rep ${r.rep}: no own-I/O count for ${tool} (its CPU-s/GB is no evidence): ${run.ownIo.reason}`);
      }
    }
    const s: Summary = {
      target: target.kind,
      workload: w.name,
      ratio: spread(rows.map((r) => r.ratio)),
      ratioMixed: spread(rows.map((r) => r.k.storageBytesPerSec / r.fMixed.bytesPerSec)),
      ratioSplit: rows.some((r) => r.fSplit) ? spread(rows.filter((r) => r.fSplit).map((r) => r.k.storageBytesPerSec / r.fSplit!.bytesPerSec)) : null,
      ratioLaidOut: rows.some((r) => r.fNew) ? spread(rows.filter((r) => r.fNew).map((r) => r.k.storageBytesPerSec / r.fMixed.bytesPerSec)) : null,
      kCpu: spread(rows.map((r) => r.k.cpuSecondsPerGb)),
      fCpu: spread(rows.map((r) => r.f.cpuSecondsPerGb)),
      cpuRatio: spread(rows.map((r) => r.k.cpuSecondsPerGb / r.f.cpuSecondsPerGb)),
      kCpuDevice: spread(rows.map((r) => r.k.cost.perDeviceGb)),
      fCpuDevice: spread(rows.map((r) => r.f.cost.perDeviceGb)),
      coverage: spread(rows.filter((r) => r.k.storageReadBytes >= COVERAGE_MIN_READ_BYTES).map((r) => r.k.window.readCoverage ?? Number.NaN)),
      vsProbe: p ? spread(rows.map((r) => r.k.storageBytesPerSec / mixLimit(p, r.k.readFraction))) : null,
    };
    summaries.push(s);
    // In bytes, not requests: the two tools' requests differ in size (see kvQueuedMiB).
    const kvQueue = spread(rows.map((r) => kvQueuedMiB(r.k)));
    const fioQueue = spread(rows.map((r) => queuedMiB(r.f.run)));
    const kvVsProbe = p ? spread(rows.map((r) => r.k.storageBytesPerSec / mixLimit(p, r.k.readFraction))).median : Number.NaN;
    // A shallow queue alone is no proof (a virtual disk may reach its limit with fewer requests in flight).
    if (kvQueue.median < 0.5 * fioQueue.median && !(kvVsProbe >= 0.8)) {
      console.log(`NOTE: kvbench kept ${fmt(kvQueue.median, 0)} MiB in the device's queue against fio's ${fmt(fioQueue.median, 0)}: this workload did not saturate the device, so the ratio compares offered load, not engines`);
    }
    if (s.ratioLaidOut) console.log(`kvbench ÷ fio overwriting laid-out files (no block allocation, no new-file metadata; a reference, not the same work): ${fmtSpread(s.ratioLaidOut, 3)}`);
    if (s.ratioSplit) console.log(`kvbench ÷ fio mixed jobs: ${fmtSpread(s.ratioMixed, 3)}; ÷ fio split reader/writer jobs: ${fmtSpread(s.ratioSplit, 3)}`);
    console.log(`efficiency kvbench ÷ fio${s.ratioSplit ? ' (the faster layout, each repetition)' : s.ratioLaidOut ? ' (a new file per entry, as kvbench)' : ''}: ${fmtSpread(s.ratio, 3)} → ${verdict(s.ratio.median >= EFFICIENCY_TARGET, s.ratio.n)} (target ≥ ${EFFICIENCY_TARGET})`);
    console.log(`CPU-s per GB of each tool's own I/O (/proc/<pid>/io of its process tree; the verdict's denominator): kvbench ${fmtSpread(s.kCpu, 3)} → ${verdict(s.kCpu.median <= CPU_TARGET_S_PER_GB, s.kCpu.n)} (target ≤ ${CPU_TARGET_S_PER_GB}); fio ${fmtSpread(s.fCpu, 3)}; kvbench ÷ fio ${fmtSpread(s.cpuRatio, 3)}`);
    console.log(`  context, not judged: CPU-s per GB the whole device moved (any process's I/O, journal included): kvbench ${fmtSpread(s.kCpuDevice, 3)}; fio ${fmtSpread(s.fCpuDevice, 3)}`);
    const reading = rows.filter((r) => r.k.storageReadBytes >= COVERAGE_MIN_READ_BYTES).length;
    const fewReads = rows.filter((r) => r.k.storageReadBytes > 0 && r.k.storageReadBytes < COVERAGE_MIN_READ_BYTES);
    if (reading === 0 && fewReads.length > 0) {
      const mostMb = Math.max(...fewReads.map((r) => r.k.storageReadBytes)) / 1e6;
      console.log(`device read coverage: not judged (kvbench read at most ${fmt(mostMb, 1)} MB a run, under ${COVERAGE_MIN_READ_BYTES / 1e9} GB: other processes' reads would decide it)`);
    }
    if (reading > 0) {
      // A run without the bench's own device sample is no evidence of coverage.
      const unsampled = reading - s.coverage.n;
      const said = unsampled > 0 ? `MISS (${unsampled} of ${reading} runs without the bench's own device sample)` : verdict(s.coverage.min >= COVERAGE_TARGET, s.coverage.n);
      console.log(`device read coverage (the bench's device sample over kvbench's window ÷ engine read bytes): ${fmtSpread(s.coverage, 3)} → ${said} (target ≥ ${COVERAGE_TARGET})`);
    }
  }
}

/** The tool's own block-layer bytes ÷ all the device moved during its run (below 1: others' I/O, or the journal's). */
function ownShare(c: CpuCost): number {
  return c.ownIoBytes !== null && c.deviceBytes !== null && c.deviceBytes > 0 ? c.ownIoBytes / c.deviceBytes : Number.NaN;
}

/** The device's average queue depth over a run (iostat's aqu-sz: Σ in-flight × time ÷ time), in block requests. */
function aqu(run: ChildRun): number {
  const io = run.device.io;
  return io ? io.weightedIoMs / (io.elapsedNs / 1e6) : Number.NaN;
}

/** The same over kvbench's measured window (its own sample). */
function kvAqu(k: KvbenchRun): number {
  return k.results.kvbench.device_io?.avg_queue_depth ?? aqu(k.run);
}

/**
 * MiB in the device's queue on average: requests in flight × mean request size. The request count
 * alone does not compare the tools: the block layer cuts the same 16 MiB writes into requests of
 * 0.5–4 MiB depending on the buffer's memory (fio's against kvbench's), so 40 requests can hold as
 * many bytes as 250.
 */
function queuedMiB(run: ChildRun): number {
  const io = run.device.io;
  if (!io) return Number.NaN;
  const ios = io.readIos + io.writeIos;
  return ios > 0 ? (aqu(run) * (io.readBytes + io.writeBytes)) / ios / 2 ** 20 : Number.NaN;
}

/** The same over kvbench's measured window (its own sample). */
function kvQueuedMiB(k: KvbenchRun): number {
  const d = k.results.kvbench.device_io;
  if (!d?.available || d.avg_queue_depth == null) return queuedMiB(k.run);
  const ios = (d.read_ios ?? 0) + (d.write_ios ?? 0);
  return ios > 0 ? (d.avg_queue_depth * ((d.read_bytes ?? 0) + (d.write_bytes ?? 0))) / ios / 2 ** 20 : Number.NaN;
}

function summariseK(k: KvbenchRun): Record<string, unknown> {
  return {
    elapsed_s: k.elapsedS, storage_read_bytes: k.storageReadBytes, storage_write_bytes: k.storageWriteBytes,
    storage_read_bytes_per_sec: k.storageReadBytesPerSec, storage_write_bytes_per_sec: k.storageWriteBytesPerSec,
    read_fraction: k.readFraction, mean_entry_bytes: k.meanEntryBytes, cpu_user_s: k.run.cpuUserS, cpu_system_s: k.run.cpuSystemS,
    cpu_s_per_gb: k.cpuSecondsPerGb, own_io: k.run.ownIo, own_io_bytes: k.cost.ownIoBytes, cpu_s_per_device_gb: k.cost.perDeviceGb, wall_s: k.run.wallNs / 1e9, device_read_bytes: k.run.device.io?.readBytes ?? null,
    device_write_bytes: k.run.device.io?.writeBytes ?? null, window_device: k.window.sample, read_coverage: k.window.readCoverage, write_coverage: k.window.writeCoverage,
    engine_read_coverage: k.window.engineReadCoverage, kvbench_flagged: k.results.kvbench.device_io.flagged, direct_io: k.directIo, event_loop_lag_p99_ns: k.lagP99Ns, device_avg_queue_depth: kvAqu(k), device_queued_mib: kvQueuedMiB(k),
  };
}

function summariseF(f: FioRun): Record<string, unknown> {
  return {
    command: f.commandLine, read_bytes: f.readBytes, write_bytes: f.writeBytes, read_bytes_per_sec: f.readBytesPerSec,
    write_bytes_per_sec: f.writeBytesPerSec, cpu_user_s: f.run.cpuUserS, cpu_system_s: f.run.cpuSystemS, cpu_s_per_gb: f.cpuSecondsPerGb,
    own_io: f.run.ownIo, own_io_bytes: f.cost.ownIoBytes, cpu_s_per_device_gb: f.cost.perDeviceGb,
    device_read_bytes: f.run.device.io?.readBytes ?? null, device_write_bytes: f.run.device.io?.writeBytes ?? null,
    device_avg_queue_depth: aqu(f.run), device_queued_mib: queuedMiB(f.run), runtime_ms: f.runtimeMs,
  };
}

async function main(): Promise<void> {
  const fio = requireFio();
  console.log(`engine-vs-fio: ${machineLine()}; ${fio}`);
  console.log(`${reps} alternations of ${durationS} s windows after a ${values['warm-up']} s warm-up; models: read-heavy ${values['read-model']}, write-heavy ${values['write-model']}; ${values.users} users, --io-depth ${ioDepth}, --io-chunk-mib ${values['io-chunk-mib']}`);
  const summaries: Summary[] = [];
  const raw: unknown[] = [];
  try {
    for (const kind of values.targets!.split(',')) {
      const target =
        kind === 'ram'
          ? setupRamTarget({ imageGiB: Number(values['ram-image-gib']), tag: 'evf' })
          : kind === 'disk'
            ? setupDiskTarget({ parent: values['disk-parent']!, tag: 'evf' })
            : null;
      if (target === null) throw new Error(`unknown target '${kind}' (ram, disk)`);
      await benchTarget(target, summaries, raw);
      cleanupAll();
    }
  } finally {
    cleanupAll();
  }
  console.log('\n=== summary (median of the alternations; min, max)');
  console.log(
    table([
      ['target', 'workload', 'kvbench ÷ fio', `≥ ${EFFICIENCY_TARGET}`, '÷ mixed / split', '÷ laid-out fio', 'kvbench CPU-s/GB', `≤ ${CPU_TARGET_S_PER_GB}`, 'fio CPU-s/GB', 'kvb / fio CPU-s/dev GB', 'dev read cov', 'kvbench ÷ probe'],
      ...summaries.map((s) => [
        s.target, s.workload,
        `${fmt(s.ratio.median, 3)} (${fmt(s.ratio.min, 3)}–${fmt(s.ratio.max, 3)})`, verdict(s.ratio.median >= EFFICIENCY_TARGET, s.ratio.n),
        s.ratioSplit ? `${fmt(s.ratioMixed.median, 3)} / ${fmt(s.ratioSplit.median, 3)}` : '-',
        s.ratioLaidOut ? fmt(s.ratioLaidOut.median, 3) : '-',
        `${fmt(s.kCpu.median, 3)} (${fmt(s.kCpu.min, 3)}–${fmt(s.kCpu.max, 3)})`, verdict(s.kCpu.median <= CPU_TARGET_S_PER_GB, s.kCpu.n),
        `${fmt(s.fCpu.median, 3)} (${fmt(s.fCpu.min, 3)}–${fmt(s.fCpu.max, 3)})`,
        `${fmt(s.kCpuDevice.median, 3)} / ${fmt(s.fCpuDevice.median, 3)}`,
        s.coverage.n > 0 ? `${fmt(s.coverage.min, 3)}–${fmt(s.coverage.max, 3)}` : '-',
        s.vsProbe ? `${fmt(s.vsProbe.median, 3)}` : '-',
      ]),
    ]),
  );
  console.log('GB = 10^9 bytes. CPU-s/GB (the verdict) = user + system seconds of the whole process tree ÷ GB that same process tree read and wrote at the block layer (/proc/<pid>/io read_bytes + write_bytes − cancelled_write_bytes, summed as the kernel reaps each process), over the whole run, both tools alike. CPU-s/dev GB (context, not judged) = the same seconds ÷ GB the whole device moved meanwhile, other processes\' I/O and the file system\'s journal included. dev read cov = device read bytes ÷ kvbench storage read bytes over kvbench\'s measured window, from this bench\'s own /proc/diskstats sample (never kvbench\'s counters).');
  if (values.json) fs.writeFileSync(values.json, `${JSON.stringify({ machine: machineLine(), summaries, raw }, null, 2)}\n`);
}

await main();
