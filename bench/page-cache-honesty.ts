// Page-cache honesty: during a storage-only kvbench run the bench samples, itself, the block device
// behind --cache-dir (/proc/diskstats, the device findmnt names) and the engine process's own
// block-layer reads (/proc/<pid>/io), and reads both off at the two ends of kvbench's measured window
// (bench/lib/device-window.ts); it sets them beside the engine's storage-tier bytes. With direct I/O
// the device must have read at least 95 % of what the engine says it read from storage; with
// buffered I/O (--direct-io off) the page cache serves re-reads, and every run it served must be
// flagged by kvbench (src-main/engine/metrics/device-stats.ts: assessDevicePageCache). kvbench's own view of
// the same window (kvbench.device_io) is printed beside the bench's as a cross-check, never judged
// by: a kvbench that counted the wrong device, or the wrong span, would agree with itself. Exits 1
// on a MISS.
//
//   node bench/page-cache-honesty.ts [--targets ram,disk] [--reps 2] [--duration 15]
//        [--model llama3.1-8b] [--users 8] [--ram-image-gib 6] [--disk-parent /var/tmp]
//        [--shared-reader-mib 512] [--shared-reader-jobs 3] [--json FILE]
//
// Device counters count every process's I/O on the device: on a shared disk other work can only
// raise coverage, never lower it, so a flag is never caused by noise, but another reader can hide
// page-cache hits. The third mode, "buffered+reader", runs buffered beside a process that reads
// its own file on the same drive with direct I/O: the device's coverage then looks fine, and only
// the engine process's own count can still say that the page cache served its reads.

import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { MIN_DEVICE_READ_COVERAGE } from '../src-main/engine/metrics/device-stats.ts';
import { cleanupAll } from './lib/cleanup.ts';
import { waitForQuiet } from './lib/measure.ts';
import { runKvbench, type KvbenchRun } from './lib/runners.ts';
import { startSharedReader } from './lib/shared-reader.ts';
import { fmt, table } from './lib/stats.ts';
import { machineLine, setupDiskTarget, setupRamTarget, type BenchTarget } from './lib/targets.ts';
import { bufferedFlagVerdict, directReadVerdict, type PageCacheMode, type PageCacheRun } from './lib/verdicts.ts';

const { values } = parseArgs({
  options: {
    targets: { type: 'string', default: 'ram,disk' },
    reps: { type: 'string', default: '2' },
    duration: { type: 'string', default: '15' },
    model: { type: 'string', default: 'llama3.1-8b' },
    users: { type: 'string', default: '8' },
    seed: { type: 'string', default: '1' },
    'ram-image-gib': { type: 'string', default: '6' },
    'disk-parent': { type: 'string', default: '/var/tmp' },
    'shared-reader-mib': { type: 'string', default: '512' },
    'shared-reader-jobs': { type: 'string', default: '3' },
    json: { type: 'string' },
  },
});

const GIB = 1024 ** 3;

interface Row {
  target: string;
  mode: PageCacheMode;
  rep: number;
  k: KvbenchRun;
}

function args(dir: string, mode: Row['mode']): string[] {
  return [
    '--model', values.model!, '--num-users', values.users!, '--duration', values.duration!, '--gpu-mem-gb', '0', '--cpu-mem-gb', '0',
    '--generation-mode', 'none', '--seed', values.seed!, '--cache-dir', dir, '--direct-io', mode === 'direct' ? 'on' : 'off',
  ];
}

async function main(): Promise<void> {
  console.log(`page-cache-honesty: ${machineLine()}`);
  const rows: Row[] = [];
  const where: string[] = [];
  try {
    for (const kind of values.targets!.split(',')) {
      const target: BenchTarget =
        kind === 'ram' ? setupRamTarget({ imageGiB: Number(values['ram-image-gib']), tag: 'pch' }) : setupDiskTarget({ parent: values['disk-parent']!, tag: 'pch' });
      where.push(`${kind}: ${target.description}`);
      console.log(`\n=== ${kind}: ${target.description}`);
      console.log(`kvbench run ${args('<dir>', 'direct').join(' ')}  (and --direct-io off)`);
      for (let rep = 1; rep <= Number(values.reps); rep++) {
        const modes: Row['mode'][] = rep % 2 === 1 ? ['direct', 'buffered', 'buffered+reader'] : ['buffered+reader', 'buffered', 'direct'];
        for (const mode of modes) {
          await waitForQuiet({ deviceDir: target.dir, maxWaitS: 60 });
          const reader = mode === 'buffered+reader' ? startSharedReader(target.dir, Number(values['shared-reader-mib']), Number(values['shared-reader-jobs'])) : null;
          let k: KvbenchRun;
          try {
            k = await runKvbench(args(target.dir, mode), { deviceDir: target.dir, tag: `pch-${kind}-${mode}-${rep}` });
          } finally {
            reader?.stop();
          }
          // Each run writes its own new files and deletes them at its end, so no run reads another's cached pages.
          rows.push({ target: kind, mode, rep, k });
        }
      }
      cleanupAll();
    }
  } finally {
    cleanupAll();
  }
  console.log(
    "\n=== storage-tier bytes beside the device's and the engine process's, over kvbench's measured window: sampled by this bench " +
      "(the device findmnt names; /proc/<pid>/io of the engine), and, as a cross-check, kvbench's own kvbench.device_io",
  );
  const kd = (r: Row) => r.k.results.kvbench.device_io;
  console.log(
    table([
      ['target', 'I/O', 'rep', 'engine R GiB', 'bench: device', 'device R GiB', 'read cov', 'engine-process cov', 'engine W GiB', 'device W GiB', 'write cov', 'edge gap ms', 'kvbench: device', 'read cov', 'own cov', 'flag'],
      ...rows.map((r) => {
        const w = r.k.window;
        return [
          r.target, r.mode, String(r.rep),
          fmt(r.k.storageReadBytes / GIB), w.sample.device ?? '-', w.sample.readBytes === null ? '-' : fmt(w.sample.readBytes / GIB), fmt(w.readCoverage, 3), fmt(w.engineReadCoverage, 3),
          fmt(r.k.storageWriteBytes / GIB), w.sample.writeBytes === null ? '-' : fmt(w.sample.writeBytes / GIB), fmt(w.writeCoverage, 3), fmt(w.sample.edgeGapMs, 0),
          kd(r).device ?? '-', fmt(kd(r).read_coverage ?? Number.NaN, 3), fmt(kd(r).process_read_coverage ?? Number.NaN, 3), kd(r).flagged ? 'FLAGGED' : 'ok',
        ];
      }),
    ]),
  );
  for (const r of rows) {
    const w = r.k.window.sample;
    const where = `${r.target} ${r.mode} rep ${r.rep}`;
    if (w.reason) console.log(`  ${where}: no device sample of the bench's own: ${w.reason}`);
    if (w.engineReason && !w.reason) console.log(`  ${where}: no engine-process count of the bench's own: ${w.engineReason}`);
    // The cross-check: kvbench counting another device than the one the files are on is its bug.
    if (w.device !== null && kd(r).device && kd(r).device !== w.device) console.log(`  ${where}: kvbench counted device ${kd(r).device}, the cache dir is on ${w.device}`);
    if (kd(r).flag_reason) console.log(`  ${where}: kvbench flagged: ${kd(r).flag_reason}`);
  }
  const judged: PageCacheRun[] = rows.map((r) => ({
    mode: r.mode,
    readCoverage: r.k.window.readCoverage,
    engineReadCoverage: r.k.window.engineReadCoverage,
    kvbenchFlagged: kd(r).flagged,
    ramBacked: r.k.results.kvbench.tiers.storage.ram_backed ?? false,
  }));
  const direct = directReadVerdict(judged, MIN_DEVICE_READ_COVERAGE);
  const buffered = (['buffered', 'buffered+reader'] as const).map((mode) => bufferedFlagVerdict(judged, mode, MIN_DEVICE_READ_COVERAGE));
  const directKv = rows.filter((r) => r.mode === 'direct').map((r) => kd(r).read_coverage ?? Number.NaN);
  console.log(`\ndirect I/O, device read coverage (the bench's sample): ${direct.line}`);
  console.log(`direct I/O, kvbench's own window coverage (cross-check, not judged): ${directKv.map((x) => fmt(x, 3)).join(', ') || '-'}`);
  for (const v of buffered) console.log(v.line);
  if (values.json) {
    fs.writeFileSync(
      values.json,
      `${JSON.stringify(
        {
          machine: machineLine(),
          where,
          pass: direct.pass && buffered.every((v) => v.pass),
          verdicts: [direct.line, ...buffered.map((v) => v.line)],
          rows: rows.map((r) => ({
            target: r.target, mode: r.mode, rep: r.rep, engine_read_bytes: r.k.storageReadBytes, engine_write_bytes: r.k.storageWriteBytes,
            bench_window: r.k.window, whole_run_device: r.k.run.device.io, kvbench_device_io: kd(r),
          })),
        },
        null,
        2,
      )}\n`,
    );
  }
  if (!direct.pass || buffered.some((v) => !v.pass)) process.exitCode = 1;
}

await main();
