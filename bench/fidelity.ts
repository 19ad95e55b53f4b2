// Fidelity: does kvbench see a device that is N× faster as N× faster? The same kvbench scenario
// runs on one device (a RAM-backed loop device) throttled by cgroup v1 blkio to two bandwidths
// with a known ratio (default 800 MB/s and 170 MB/s: 4.71×), alternating fast and slow, and the
// ratio of what kvbench reports for its primary metrics is compared with the true ratio:
//   wall-clock throughput  summary.avg_throughput_tokens_per_sec
//   storage read bandwidth kvbench.primary.storage_read_bytes_per_sec
//   decode bytes read      kvbench.primary.decode_bytes_read
// Target: every reported ratio within 10 % of the throttle ratio. fio runs under the same two
// throttles as a control (it should see the true ratio: the throttle works).
//
//   node bench/fidelity.ts [--fast-mbps 800] [--slow-mbps 170] [--reps 3] [--duration 20]
//        [--model llama3.1-8b] [--users 8] [--extra="--flag value ..."] (note the =) [--ram-image-gib 6] [--json FILE]
//
// Needs root (loop device, cgroups) and fio. Removes the device and the cgroups on every exit path.

import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { cleanupAll } from './lib/cleanup.ts';
import { waitForQuiet } from './lib/measure.ts';
import { layOutFioFiles, runFio, runKvbench, type KvbenchRun } from './lib/runners.ts';
import { fmt, fmtSpread, median, spread, table } from './lib/stats.ts';
import { createThrottleCgroup, machineLine, requireFio, setupRamTarget, type ThrottleCgroup } from './lib/targets.ts';

const { values } = parseArgs({
  options: {
    'fast-mbps': { type: 'string', default: '800' },
    'slow-mbps': { type: 'string', default: '170' },
    reps: { type: 'string', default: '3' },
    duration: { type: 'string', default: '20' },
    model: { type: 'string', default: 'llama3.1-8b' },
    users: { type: 'string', default: '8' },
    extra: { type: 'string', default: '' },
    seed: { type: 'string', default: '1' },
    'ram-image-gib': { type: 'string', default: '6' },
    'fio-duration': { type: 'string', default: '8' },
    json: { type: 'string' },
  },
});

const TOLERANCE = 0.1;
const fastBps = Number(values['fast-mbps']) * 1e6;
const slowBps = Number(values['slow-mbps']) * 1e6;
const trueRatio = fastBps / slowBps;
const reps = Number(values.reps);

interface Metric {
  key: string;
  label: string;
  get: (k: KvbenchRun) => number;
}
/**
 * Diagnostic, not a kvbench metric: `field` summed over kvbench's 1 s timeline up to --duration
 * (the crossing interval pro-rated), ÷ --duration: what the run would report if its measured window
 * ended at the deadline instead of after the drain of requests still in flight.
 */
function windowRate(k: KvbenchRun, field: 'generated_tokens_per_sec' | 'storage_read_bytes_per_sec', fromShare = 0): number {
  const durationNs = Number(values.duration) * 1e9;
  const fromNs = durationNs * fromShare;
  let total = 0;
  for (const p of k.results.kvbench.timeline) {
    const start = Math.max(fromNs, p.elapsed_ns - p.interval_ns);
    const inWindowNs = Math.max(0, Math.min(p.elapsed_ns, durationNs) - start);
    total += (p[field] * inWindowNs) / 1e9;
  }
  return total / ((durationNs - fromNs) / 1e9);
}

const METRICS: Metric[] = [
  { key: 'tokens_per_sec', label: 'wall-clock throughput (tokens/s)', get: (k) => k.tokensPerSec },
  { key: 'storage_read_bytes_per_sec', label: 'storage read bandwidth (bytes/s)', get: (k) => k.results.kvbench.primary.storage_read_bytes_per_sec },
  { key: 'decode_bytes_read', label: 'decode bytes read (bytes)', get: (k) => k.decodeBytesRead },
];
const DIAGNOSTICS: Metric[] = [
  { key: 'window_tokens_per_sec', label: 'diag: tokens/s cut at --duration', get: (k) => windowRate(k, 'generated_tokens_per_sec') },
  { key: 'window_storage_read_bytes_per_sec', label: 'diag: storage read B/s cut at --duration', get: (k) => windowRate(k, 'storage_read_bytes_per_sec') },
  // The second half only: the first half serves as a warm-up, so requests in flight at the window's
  // start and end balance out instead of every user's first request being missing.
  { key: 'second_half_tokens_per_sec', label: 'diag: tokens/s, 2nd half of --duration', get: (k) => windowRate(k, 'generated_tokens_per_sec', 0.5) },
  { key: 'device_read_bytes_per_sec', label: 'diag: device read B/s (diskstats, whole run)', get: (k) => (k.run.device.io?.readBytes ?? Number.NaN) / (k.run.wallNs / 1e9) },
];
/**
 * A build that also reports its fixed measured window (`kvbench.window`: counters snapshotted at the
 * deadline, bytes counted per chunk; the prototype of the fix described in docs/benchmarks.md) is
 * measured on those figures too. Absent from builds without it.
 */
type WindowSection = { tokens_per_sec: number; storage_read_bytes_per_sec: number; decode_bytes_read: number; requests_completed: number };
const windowOf = (k: KvbenchRun): WindowSection | undefined => (k.results.kvbench as unknown as { window?: WindowSection }).window;
const WINDOW_METRICS: Metric[] = [
  { key: 'fixed_window_tokens_per_sec', label: 'fixed window: tokens/s', get: (k) => windowOf(k)?.tokens_per_sec ?? Number.NaN },
  { key: 'fixed_window_storage_read_bytes_per_sec', label: 'fixed window: storage read B/s', get: (k) => windowOf(k)?.storage_read_bytes_per_sec ?? Number.NaN },
  { key: 'fixed_window_decode_bytes_read', label: 'fixed window: decode bytes read', get: (k) => windowOf(k)?.decode_bytes_read ?? Number.NaN },
];

function kvArgs(dir: string): string[] {
  const extra = values.extra!.trim() === '' ? [] : values.extra!.trim().split(/\s+/);
  return [
    '--model', values.model!, '--num-users', values.users!, '--duration', values.duration!,
    '--gpu-mem-gb', '0', '--cpu-mem-gb', '0', '--generation-mode', 'none', '--seed', values.seed!,
    '--cache-dir', dir, ...extra,
  ];
}

async function main(): Promise<void> {
  console.log(`fidelity: ${machineLine()}; ${requireFio()}`);
  const raw: Record<string, unknown>[] = [];
  try {
    const target = setupRamTarget({ imageGiB: Number(values['ram-image-gib']), tag: 'fid' });
    if (target.device === null) throw new Error('no block device behind the RAM target');
    const mm = target.device.majorMinor;
    const fast = createThrottleCgroup({ tag: 'fast', majorMinor: mm, bytesPerSec: fastBps });
    const slow = createThrottleCgroup({ tag: 'slow', majorMinor: mm, bytesPerSec: slowBps });
    console.log(`target: ${target.description}`);
    console.log(`throttles (cgroup v1 blkio, read and write bps each, on ${mm}): fast ${fastBps / 1e6} MB/s, slow ${slowBps / 1e6} MB/s → true ratio ${fmt(trueRatio, 3)}`);
    console.log(`scenario: kvbench run ${kvArgs('<dir>').join(' ')}`);

    // Control: fio sees the throttles.
    const fioRatios: number[] = [];
    const fioSpec = { dir: path.join(target.dir, 'fio'), blockBytes: 16 << 20, jobs: 16, readPercent: 100, runtimeS: Number(values['fio-duration']), fileBytes: 64 << 20, fdatasyncEvery: 0, ioengine: 'psync' as const };
    fs.mkdirSync(fioSpec.dir, { recursive: true });
    await layOutFioFiles(fioSpec, target.dir);
    const fioRun = async (cg: ThrottleCgroup): Promise<number> => (await runFio(fioSpec, { deviceDir: target.dir, cgroup: cg })).bytesPerSec;
    const ff = await fioRun(fast);
    const fs1 = await fioRun(slow);
    fioRatios.push(ff / fs1);
    console.log(`control: fio read under the throttles: fast ${fmt(ff / 1e6, 1)} MB/s, slow ${fmt(fs1 / 1e6, 1)} MB/s, ratio ${fmt(ff / fs1, 3)} (true ${fmt(trueRatio, 3)})`);
    fs.rmSync(fioSpec.dir, { recursive: true, force: true });

    const runs: { fast: KvbenchRun[]; slow: KvbenchRun[] } = { fast: [], slow: [] };
    for (let rep = 1; rep <= reps; rep++) {
      const order: Array<['fast' | 'slow', ThrottleCgroup]> = rep % 2 === 1 ? [['fast', fast], ['slow', slow]] : [['slow', slow], ['fast', fast]];
      for (const [name, cg] of order) {
        const quiet = await waitForQuiet({ maxWaitS: 60 });
        const k = await runKvbench(kvArgs(target.dir), { deviceDir: target.dir, cgroup: cg, tag: `fid-${name}-${rep}` });
        runs[name].push(k);
        raw.push({
          rep, throttle: name, bytes_per_sec_limit: cg.bytesPerSec, elapsed_s: k.elapsedS, requests_completed: k.results.requests_completed,
          ...Object.fromEntries([...METRICS, ...WINDOW_METRICS, ...DIAGNOSTICS].map((m) => [m.key, m.get(k)])),
          window_requests_completed: windowOf(k)?.requests_completed ?? null, storage_write_bytes_per_sec: k.storageWriteBytesPerSec,
          device_read_bytes: k.run.device.io?.readBytes ?? null, machine_busy: k.run.machineBusy, quiet_before: quiet.quiet,
        });
      }
    }

    console.log('\nper run:');
    console.log(
      table([
        ['rep', 'throttle', 'elapsed s', 'requests', 'tokens/s', 'storage R MB/s', 'storage W MB/s', 'decode GiB read', 'device R MB/s'],
        ...raw.map((r) => [
          String(r.rep), String(r.throttle), fmt(r.elapsed_s as number, 1), String(r.requests_completed), fmt(r.tokens_per_sec as number, 1),
          fmt((r.storage_read_bytes_per_sec as number) / 1e6, 1), fmt((r.storage_write_bytes_per_sec as number) / 1e6, 1),
          fmt((r.decode_bytes_read as number) / 1024 ** 3, 2), r.device_read_bytes === null ? '-' : fmt((r.device_read_bytes as number) / 1e6 / (r.elapsed_s as number), 1),
        ]),
      ]),
    );

    console.log(`\nratios fast ÷ slow (true ${fmt(trueRatio, 3)}, pass within ±${TOLERANCE * 100} %):`);
    const rows: string[][] = [['metric', 'per-pair ratio: median (min, max)', 'ratio of medians', 'error', 'verdict']];
    const summary: Record<string, unknown> = {};
    const withWindow = runs.fast.every((k) => windowOf(k) !== undefined) && runs.slow.every((k) => windowOf(k) !== undefined);
    for (const m of [...METRICS, ...(withWindow ? WINDOW_METRICS : []), ...DIAGNOSTICS]) {
      const diag = DIAGNOSTICS.includes(m);
      const pairRatios = runs.fast.map((f, i) => m.get(f) / m.get(runs.slow[i]));
      const s = spread(pairRatios);
      const ofMedians = median(runs.fast.map(m.get)) / median(runs.slow.map(m.get));
      const err = s.median / trueRatio - 1;
      rows.push([m.label, fmtSpread(s, 3), fmt(ofMedians, 3), `${err >= 0 ? '+' : ''}${fmt(err * 100, 1)} %`, diag ? '(diagnostic)' : Math.abs(err) <= TOLERANCE ? 'PASS' : 'MISS']);
      summary[m.key] = { pair_ratios: pairRatios, median: s.median, min: s.min, max: s.max, ratio_of_medians: ofMedians, error: err };
    }
    console.log(table(rows));
    console.log(`control fio ratio ${fmt(median(fioRatios), 3)}`);
    if (values.json) fs.writeFileSync(values.json, `${JSON.stringify({ machine: machineLine(), true_ratio: trueRatio, scenario: kvArgs('<dir>'), fio_ratios: fioRatios, summary, raw }, null, 2)}\n`);
  } finally {
    cleanupAll();
  }
}

await main();
