// Page-cache honesty: during a storage-only kvbench run, the block device behind --cache-dir is
// sampled (/proc/diskstats) and its bytes are set beside the engine's storage-tier bytes. With
// direct I/O the device must have read at least 95 % of what the engine says it read from storage;
// with buffered I/O (--direct-io off) the page cache serves re-reads, the device reads far less,
// and the result must be flagged (src-main/engine/metrics/device-stats.ts: assessPageCache).
//
//   node bench/page-cache-honesty.ts [--targets ram,disk] [--reps 2] [--duration 15]
//        [--model llama3.1-8b] [--users 8] [--ram-image-gib 6] [--disk-parent /var/tmp]
//        [--shared-reader-mib 512] [--shared-reader-jobs 3] [--json FILE]
//
// Device counters count every process's I/O on the device: on a shared disk other work can only
// raise coverage, never lower it, so a flag is never caused by noise, but another reader can hide
// page-cache hits. The third mode, "buffered+reader", runs buffered beside a process that reads
// its own file on the same drive with direct I/O: the device's coverage then looks fine, and only
// kvbench's own count (/proc/self/io) can still say that the page cache served its reads.

import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { MIN_DEVICE_READ_COVERAGE } from '../src-main/engine/metrics/device-stats.ts';
import { cleanupAll } from './lib/cleanup.ts';
import { waitForQuiet } from './lib/measure.ts';
import { runKvbench, type KvbenchRun } from './lib/runners.ts';
import { startSharedReader } from './lib/shared-reader.ts';
import { fmt, table } from './lib/stats.ts';
import { machineLine, setupDiskTarget, setupRamTarget, type BenchTarget } from './lib/targets.ts';

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
  mode: 'direct' | 'buffered' | 'buffered+reader';
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
  console.log('\n=== device bytes beside engine storage bytes: sampled by this bench over the whole run, and by kvbench itself over its measured window (what its results say)');
  console.log(
    table([
      ['target', 'I/O', 'rep', 'engine R GiB', 'device R GiB', 'read cov', 'engine W GiB', 'device W GiB', 'write cov', 'engine R GB/s', 'flag', 'kvbench cov', 'kvbench own cov', 'kvbench flag', 'expected'],
      ...rows.map((r) => {
        const io = r.k.run.device.io;
        return [
          r.target, r.mode, String(r.rep),
          fmt(r.k.storageReadBytes / GIB), io ? fmt(io.readBytes / GIB) : '-', fmt(r.k.pageCache.readCoverage, 3),
          fmt(r.k.storageWriteBytes / GIB), io ? fmt(io.writeBytes / GIB) : '-', fmt(r.k.pageCache.writeCoverage, 3),
          fmt(r.k.storageReadBytesPerSec / 1e9),
          r.k.pageCache.flagged ? 'FLAGGED' : 'ok',
          fmt(r.k.results.kvbench.device_io.read_coverage ?? Number.NaN, 3),
          fmt(r.k.results.kvbench.device_io.process_read_coverage ?? Number.NaN, 3),
          r.k.results.kvbench.device_io.flagged ? 'FLAGGED' : 'ok',
          r.mode === 'direct' ? (r.k.pageCache.flagged ? 'MISS (direct reads must reach the device)' : 'PASS') : r.k.pageCache.flagged ? 'PASS (page cache detected)' : 'not flagged (reads reached the device)',
        ];
      }),
    ]),
  );
  for (const r of rows) if (r.k.pageCache.reason) console.log(`  ${r.target} ${r.mode} rep ${r.rep}: ${r.k.pageCache.reason}`);
  // No measured direct run is no evidence: it is a MISS, never a PASS of an empty list.
  const minCoverage = (xs: number[]): string => {
    const finite = xs.filter(Number.isFinite);
    if (finite.length === 0) return 'MISS (no direct run measured)';
    const min = Math.min(...finite);
    return `min ${fmt(min, 3)} over ${finite.length} runs → ${finite.length === xs.length && min >= MIN_DEVICE_READ_COVERAGE ? 'PASS' : 'MISS'}`;
  };
  const directRows = rows.filter((r) => r.mode === 'direct');
  console.log(`\ndirect I/O, device read coverage: ${minCoverage(directRows.map((r) => r.k.pageCache.readCoverage ?? Number.NaN))} (target ≥ ${MIN_DEVICE_READ_COVERAGE})`);
  console.log(`direct I/O, kvbench's own window coverage: ${minCoverage(directRows.map((r) => r.k.results.kvbench.device_io.read_coverage ?? Number.NaN))}`);
  for (const mode of ['buffered', 'buffered+reader'] as const) {
    const buffered = rows.filter((r) => r.mode === mode);
    const flagged = buffered.filter((r) => r.k.results.kvbench.device_io.flagged).length;
    // A buffered run whose reads all reached the device would be honest unflagged; one served by the
    // page cache must be flagged. Served by the cache: kvbench's own count where it has one (the
    // device's counters include the shared reader), else the device's.
    const ownOrDevice = (r: Row): number => r.k.results.kvbench.device_io.process_read_coverage ?? r.k.pageCache.readCoverage ?? 0;
    const servedByCache = buffered.filter((r) => ownOrDevice(r) < MIN_DEVICE_READ_COVERAGE);
    const missed = servedByCache.filter((r) => !r.k.results.kvbench.device_io.flagged).length;
    console.log(
      `${mode} I/O flagged by kvbench itself: ${flagged} of ${buffered.length} runs; served by the page cache but not flagged: ${missed} → ` +
        `${buffered.length === 0 ? 'MISS (no run measured)' : missed === 0 ? 'PASS' : 'MISS'}`,
    );
  }
  if (values.json) {
    fs.writeFileSync(
      values.json,
      `${JSON.stringify({ machine: machineLine(), where, rows: rows.map((r) => ({ target: r.target, mode: r.mode, rep: r.rep, engine_read_bytes: r.k.storageReadBytes, engine_write_bytes: r.k.storageWriteBytes, device: r.k.run.device.io, kvbench_device_io: r.k.results.kvbench.device_io, assessment: r.k.pageCache })) }, null, 2)}\n`,
    );
  }
}

await main();
