// Fidelity: does kvbench see a device that is N× faster as N× faster? The same kvbench scenario
// runs on one device (a RAM-backed loop device) throttled by cgroup v1 blkio to two bandwidths
// with a known ratio (default 2000 MB/s and 425 MB/s: 4.71×), alternating fast and slow, and the
// ratio of what kvbench reports for its primary metrics is compared with the true ratio:
//   wall-clock throughput  summary.avg_throughput_tokens_per_sec
//   storage read bandwidth kvbench.primary.storage_read_bytes_per_sec
//   decode bytes read      kvbench.primary.decode_bytes_read
// Target: every reported ratio within 10 % of the throttle ratio. fio runs under the same two
// throttles as a control (it should see the true ratio: the throttle works).
//
// The scenario is chosen so both runs measure the same kind of work in a steady state, which is
// what "N× faster" can be checked against: storage only, generation none, a warm-up before the
// window (so requests in flight at its start and end balance out), one QoS class (with three, an
// overloaded queue serves high-priority users first, and a faster device reaches further into the
// lower classes: a different request mix, not a different speed), and no multi-turn reloads (the
// fast run writes enough to fill the storage tier, whose evictions turn later reloads into misses
// that cost no I/O: cheaper requests, not a faster device). tiny-1b keeps requests small enough
// that the slow run completes tens of them; wall-clock throughput counts completed requests, so its
// ratio is only as exact as that count allows (the per-run table shows it).
//
//   node bench/fidelity.ts [--fast-mbps 2000] [--slow-mbps 425] [--reps 3] [--duration 60] [--warm-up 10]
//        [--model tiny-1b] [--users 4] [--extra="--flag value ..."] (note the =) [--ram-image-gib 6] [--json FILE]
//
// Needs root (loop device, cgroups) and fio. Removes the device and the cgroups on every exit path.

import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import os from 'node:os';
import { cleanupAll, onCleanup } from './lib/cleanup.ts';
import { waitForQuiet } from './lib/measure.ts';
import { layOutFioFiles, runFio, runKvbench, type KvbenchRun } from './lib/runners.ts';
import { fmt, fmtSpread, median, spread, table } from './lib/stats.ts';
import { createThrottleCgroup, machineLine, requireFio, setupRamTarget, type ThrottleCgroup } from './lib/targets.ts';

const { values } = parseArgs({
  options: {
    'fast-mbps': { type: 'string', default: '2000' },
    'slow-mbps': { type: 'string', default: '425' },
    reps: { type: 'string', default: '3' },
    duration: { type: 'string', default: '60' },
    'warm-up': { type: 'string', default: '10' },
    model: { type: 'string', default: 'tiny-1b' },
    users: { type: 'string', default: '4' },
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
const METRICS: Metric[] = [
  { key: 'tokens_per_sec', label: 'wall-clock throughput (tokens/s)', get: (k) => k.tokensPerSec },
  { key: 'storage_read_bytes_per_sec', label: 'storage read bandwidth (bytes/s)', get: (k) => k.results.kvbench.primary.storage_read_bytes_per_sec },
  { key: 'decode_bytes_read', label: 'decode bytes read (bytes)', get: (k) => k.decodeBytesRead },
];
/** What the device itself read during the measured window (kvbench's own /proc/diskstats sample), per second. */
const deviceReadBytesPerSec = (k: KvbenchRun): number => (k.results.kvbench.device_io.read_bytes ?? Number.NaN) / k.elapsedS;
const DIAGNOSTICS: Metric[] = [
  { key: 'device_read_bytes_per_sec', label: 'diag: device read B/s (window)', get: deviceReadBytesPerSec },
  { key: 'requests_completed', label: 'diag: requests completed in the window', get: (k) => k.results.requests_completed },
];

/** One QoS class: the queue then serves requests in arrival order at any device speed. */
const ONE_QOS_CLASS_CONFIG = 'qos_distribution:\n  interactive_probability: 0.0\n  responsive_threshold: 0.0\n';

function kvArgs(dir: string, config: string): string[] {
  const extra = values.extra!.trim() === '' ? [] : values.extra!.trim().split(/\s+/);
  return [
    '--model', values.model!, '--num-users', values.users!, '--duration', values.duration!, '--warm-up', values['warm-up']!,
    '--gpu-mem-gb', '0', '--cpu-mem-gb', '0', '--generation-mode', 'none', '--disable-multi-turn', '--seed', values.seed!,
    '--config', config, '--cache-dir', dir, ...extra,
  ];
}

async function main(): Promise<void> {
  console.log(`fidelity: ${machineLine()}; ${requireFio()}`);
  const raw: Record<string, unknown>[] = [];
  try {
    const target = setupRamTarget({ imageGiB: Number(values['ram-image-gib']), tag: 'fid' });
    if (target.device === null) throw new Error('no block device behind the RAM target');
    const mm = target.device.majorMinor;
    const config = path.join(os.tmpdir(), `kvb-bench-fid-${process.pid}.yaml`);
    fs.writeFileSync(config, ONE_QOS_CLASS_CONFIG);
    onCleanup(`rm ${config}`, () => fs.rmSync(config, { force: true }));
    const fast = createThrottleCgroup({ tag: 'fast', majorMinor: mm, bytesPerSec: fastBps });
    const slow = createThrottleCgroup({ tag: 'slow', majorMinor: mm, bytesPerSec: slowBps });
    console.log(`target: ${target.description}`);
    console.log(`throttles (cgroup v1 blkio, read and write bps each, on ${mm}): fast ${fastBps / 1e6} MB/s, slow ${slowBps / 1e6} MB/s → true ratio ${fmt(trueRatio, 3)}`);
    console.log(`scenario: kvbench run ${kvArgs('<dir>', '<one QoS class>.yaml').join(' ')}`);

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

    // Unmeasured: the first run after setup is slower (fresh file system), whichever throttle it had.
    const warm = await runKvbench(kvArgs(target.dir, config), { deviceDir: target.dir, cgroup: fast, tag: 'fid-warm-up' });
    console.log(`warm-up run (not measured, fast throttle): ${fmt(warm.tokensPerSec, 1)} tokens/s, storage read ${fmt(warm.storageReadBytesPerSec / 1e6, 1)} MB/s`);
    const runs: { fast: KvbenchRun[]; slow: KvbenchRun[] } = { fast: [], slow: [] };
    for (let rep = 1; rep <= reps; rep++) {
      const order: Array<['fast' | 'slow', ThrottleCgroup]> = rep % 2 === 1 ? [['fast', fast], ['slow', slow]] : [['slow', slow], ['fast', fast]];
      for (const [name, cg] of order) {
        const quiet = await waitForQuiet({ maxWaitS: 60 });
        const k = await runKvbench(kvArgs(target.dir, config), { deviceDir: target.dir, cgroup: cg, tag: `fid-${name}-${rep}` });
        runs[name].push(k);
        raw.push({
          rep, throttle: name, bytes_per_sec_limit: cg.bytesPerSec, elapsed_s: k.elapsedS, requests_completed: k.results.requests_completed,
          ...Object.fromEntries([...METRICS, ...DIAGNOSTICS].map((m) => [m.key, m.get(k)])),
          requests_in_flight_at_close: k.results.kvbench.measured_window?.requests_in_flight_at_close ?? null,
          storage_write_bytes_per_sec: k.storageWriteBytesPerSec,
          device_read_bytes_in_window: k.results.kvbench.device_io.read_bytes, machine_busy: k.run.machineBusy, quiet_before: quiet.quiet,
        });
      }
    }

    console.log('\nper run:');
    console.log(
      table([
        ['rep', 'throttle', 'elapsed s', 'requests', 'in flight at close', 'tokens/s', 'storage R MB/s', 'storage W MB/s', 'decode GiB read', 'device R MB/s (window)'],
        ...raw.map((r) => [
          String(r.rep), String(r.throttle), fmt(r.elapsed_s as number, 1), String(r.requests_completed), String(r.requests_in_flight_at_close), fmt(r.tokens_per_sec as number, 1),
          fmt((r.storage_read_bytes_per_sec as number) / 1e6, 1), fmt((r.storage_write_bytes_per_sec as number) / 1e6, 1),
          fmt((r.decode_bytes_read as number) / 1024 ** 3, 2), fmt((r.device_read_bytes_per_sec as number) / 1e6, 1),
        ]),
      ]),
    );

    console.log(`\nratios fast ÷ slow (true ${fmt(trueRatio, 3)}, pass within ±${TOLERANCE * 100} %):`);
    const rows: string[][] = [['metric', 'per-pair ratio: median (min, max)', 'ratio of medians', 'error', 'verdict']];
    const summary: Record<string, unknown> = {};
    for (const m of [...METRICS, ...DIAGNOSTICS]) {
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
    if (values.json) fs.writeFileSync(values.json, `${JSON.stringify({ machine: machineLine(), true_ratio: trueRatio, scenario: kvArgs('<dir>', '<one QoS class>.yaml'), fio_ratios: fioRatios, summary, raw }, null, 2)}\n`);
  } finally {
    cleanupAll();
  }
}

await main();
