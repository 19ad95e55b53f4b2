// Side-by-side throughput of the storage I/O path: PayloadPool.fill on one thread, and
// EntryFileStore writes and reads (plain and with payload verification) in 16 MiB chunks with a
// fixed number in flight. Repetitions alternate write and read, because the disks here are noisy
// minutes apart and only numbers from the same run compare.
//
// The payload pool is one chunk long, as in the engine, so writes restamp slots that hold the pool.
// Writes run twice per rep, in alternating order: with every restamp on the main thread (as before
// BytePool took large restamps to its workers) and as the engine does now. Beside the rate, each
// phase reports the main thread's CPU per GB (process.threadCpuUsage), its event loop's busy time per
// GB (perf_hooks eventLoopUtilization) and the byte workers' time per GB: the event loop is what every
// simulated user waits on, so the main thread's share is the cost that matters.
//
//   node bench/io-throughput.ts --dir DIR [--total-gib 1] [--chunk-mib 16] [--inflight 8]
//        [--entry-mib 128] [--concurrent-entries 2] [--threads 1] [--direct auto|on|off]
//        [--fsync per-entry|none] [--reps 3]

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { AlignedSlab } from '../src-main/engine/io/aligned-slab.ts';
import { BytePool } from '../src-main/engine/io/byte-workers.ts';
import { freeSpaceBytes } from '../src-main/engine/io/direct-io.ts';
import { EntryFileStore, type ChunkSink, type IoTiming } from '../src-main/engine/io/entry-file-store.ts';
import { keyHash64, PayloadPool } from '../src-main/engine/io/payload.ts';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
const SEED = 20261123;

const { values } = parseArgs({
  options: {
    dir: { type: 'string' },
    'total-gib': { type: 'string', default: '1' },
    'chunk-mib': { type: 'string', default: '16' },
    inflight: { type: 'string', default: '8' },
    'entry-mib': { type: 'string', default: '128' },
    'concurrent-entries': { type: 'string', default: '2' },
    threads: { type: 'string', default: '1' },
    direct: { type: 'string', default: 'auto' },
    fsync: { type: 'string', default: 'per-entry' },
    reps: { type: 'string', default: '3' },
  },
});

if (values.dir === undefined) {
  console.error('usage: node bench/io-throughput.ts --dir DIR [options]; see the header of this file');
  process.exit(2);
}

const inflight = Number(values.inflight);
// libuv's pool (4 threads by default) caps the I/Os really in flight, and it reads the variable
// only when it starts, so the bench re-runs itself with a large enough pool.
if (process.env.UV_THREADPOOL_SIZE === undefined) {
  const child = spawnSync(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
    stdio: 'inherit',
    env: { ...process.env, UV_THREADPOOL_SIZE: String(Math.max(4, inflight * 2)) },
  });
  process.exit(child.status ?? 1);
}

const totalBytes = Number(values['total-gib']) * GiB;
const chunkBytes = Number(values['chunk-mib']) * MiB;
const entryBytes = Number(values['entry-mib']) * MiB;
const concurrentEntries = Number(values['concurrent-entries']);
const threads = Number(values.threads);
const reps = Number(values.reps);
const directIo = values.direct as 'auto' | 'on' | 'off';
const fsyncMode = values.fsync as 'per-entry' | 'none';
const entryCount = Math.ceil(totalBytes / entryBytes);
const perEntryDepth = Math.max(1, Math.ceil(inflight / concurrentEntries));

interface PhaseResult {
  bytes: number;
  wallNs: number;
  /** The whole process: main and worker threads, libuv's I/O threads. */
  cpuUs: number;
  /** The main thread only. */
  mainCpuUs: number;
  /** Event-loop utilisation of the main thread over the phase, 0..1. */
  elu: number;
  /** Time the byte workers spent on this phase's jobs, summed over workers. */
  workerBusyNs: number;
  entryNs: number[];
}

function gbPerSec(bytes: number, ns: number): number {
  return bytes / ns;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

async function runEntries(bytePool: BytePool, op: (index: number) => Promise<IoTiming>): Promise<PhaseResult> {
  const busy0 = bytePool.utilisation().busyNs;
  const cpu0 = process.cpuUsage();
  const mainCpu0 = process.threadCpuUsage();
  const elu0 = performance.eventLoopUtilization();
  const t0 = process.hrtime.bigint();
  const entryNs: number[] = [];
  let bytes = 0;
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < entryCount) {
      const timing = await op(next++);
      entryNs.push(timing.durationNs);
      bytes += timing.bytes;
    }
  };
  await Promise.all(Array.from({ length: concurrentEntries }, lane));
  const wallNs = Number(process.hrtime.bigint() - t0);
  const cpu = process.cpuUsage(cpu0);
  const mainCpu = process.threadCpuUsage(mainCpu0);
  const elu = performance.eventLoopUtilization(elu0).utilization;
  const workerBusyNs = bytePool.utilisation().busyNs - busy0;
  return { bytes, wallNs, cpuUs: cpu.user + cpu.system, mainCpuUs: mainCpu.user + mainCpu.system, elu, workerBusyNs, entryNs };
}

function entrySize(index: number): number {
  return Math.min(entryBytes, totalBytes - index * entryBytes);
}

async function main(): Promise<void> {
  const parent = path.resolve(values.dir as string);
  const freeBytes = await freeSpaceBytes(parent);
  if (freeBytes < totalBytes * 1.1) {
    console.error(`not enough free space in ${parent}: ${(freeBytes / GiB).toFixed(2)} GiB free, ${(totalBytes / GiB).toFixed(2)} GiB needed`);
    process.exit(1);
  }
  const runDir = fs.mkdtempSync(path.join(parent, 'kvb-bench-'));
  // One chunk long, as in the engine (benchmark.ts), so writes restamp slots that hold the pool.
  const payload = PayloadPool.create(SEED, chunkBytes);
  // One extra slot per concurrent entry: the chunk being filled while the others are in flight.
  const slab = new AlignedSlab(chunkBytes, inflight + concurrentEntries);
  const bytePool = await BytePool.start({ threads, pool: payload });
  // The same, but every restamp on the main thread: the engine before large restamps went to workers.
  const inlinePool = await BytePool.start({ threads, pool: payload, restampInlineBelowBytes: Number.POSITIVE_INFINITY });
  const openStore = async (name: string, bytes: BytePool): Promise<EntryFileStore> => {
    const dir = path.join(runDir, name);
    fs.mkdirSync(dir);
    return EntryFileStore.open({ dir, directIo, chunkBytes, perEntryDepth, slab, bytes, fsync: fsyncMode });
  };
  const store = await openStore('after', bytePool);
  const inlineStore = await openStore('before', inlinePool);
  const keys = Array.from({ length: entryCount }, (_, i) => `bench/entry-${i}`);
  const hashes = keys.map((k) => keyHash64(k, SEED));

  console.log(
    `io-throughput: ${(totalBytes / GiB).toFixed(2)} GiB in ${entryCount} entries of ${entryBytes / MiB} MiB, ` +
      `${chunkBytes / MiB} MiB chunks, ${inflight} in flight (${concurrentEntries} entries × depth ${perEntryDepth}), ` +
      `UV_THREADPOOL_SIZE=${process.env.UV_THREADPOOL_SIZE}, byte workers ${threads}, fsync ${fsyncMode}`,
  );
  console.log(`dir ${runDir}: direct I/O ${store.directIo.enabled ? 'on' : `off (${store.directIo.reason})`}`);
  if (!store.directIo.enabled) console.log('note: buffered reads may be served from the page cache');

  // PayloadPool.fill on the calling thread, rotating over every slab slot as the store does, so
  // the destination is not one cache-resident buffer.
  const fillRates: number[] = [];
  {
    const slots = Array.from({ length: slab.slotCount }, () => slab.tryAcquire());
    // The untimed first pass takes the page faults of the slab's lazily committed memory.
    for (const slot of slots) slot?.buffer.fill(0);
    for (let r = 0; r < reps; r++) {
      const t0 = process.hrtime.bigint();
      for (let at = 0, i = 0; at < totalBytes; at += chunkBytes, i++) {
        const slot = slots[i % slots.length];
        if (slot !== null) payload.fill(slot.buffer, hashes[i % hashes.length], at);
      }
      fillRates.push(gbPerSec(totalBytes, Number(process.hrtime.bigint() - t0)));
    }
    for (const slot of slots) if (slot !== null) slab.release(slot);
  }

  const rows: Array<{ phase: string; results: PhaseResult[] }> = [
    { phase: 'write, restamp on main (before)', results: [] },
    { phase: 'write, restamp in workers', results: [] },
    { phase: 'read', results: [] },
    { phase: 'read + verify in workers', results: [] },
  ];
  const writeAll = (s: EntryFileStore): Promise<PhaseResult> => runEntries(s.bytes, (i) => s.write(keys[i], entrySize(i), s.payloadSource(hashes[i])));
  try {
    for (let r = 0; r < reps; r++) {
      // Each write starts on an empty directory. Which one goes first alternates, so neither
      // always follows the reads (which leave slots without the pool) or the other write.
      const before = async (): Promise<void> => {
        rows[0].results.push(await writeAll(inlineStore));
        for (const key of keys) await inlineStore.delete(key);
      };
      const afterThenReads = async (): Promise<void> => {
        rows[1].results.push(await writeAll(store));
        rows[2].results.push(await runEntries(bytePool, (i) => store.read(keys[i], entrySize(i))));
        rows[3].results.push(
          await runEntries(bytePool, (i) => {
            const sink: ChunkSink = store.verifyingSink(keys[i], hashes[i]);
            return store.read(keys[i], entrySize(i), { sink });
          }),
        );
        for (const key of keys) await store.delete(key);
      };
      if (r % 2 === 0) {
        await before();
        await afterThenReads();
      } else {
        await afterThenReads();
        await before();
      }
    }
  } finally {
    const removed = await Promise.allSettled([store.removeAll(), inlineStore.removeAll()]);
    // Never recursive: anything left in it is not ours to remove.
    await fs.promises.rmdir(runDir).catch(() => undefined);
    await bytePool.close();
    await inlinePool.close();
    for (const r of removed) if (r.status === 'rejected') console.error(`cleanup of ${runDir} failed: ${String(r.reason)}`);
  }

  const pad = (s: string, n: number): string => s.padEnd(n);
  const mainMsPerGb = (x: PhaseResult): number => x.mainCpuUs / 1e3 / (x.bytes / 1e9);
  // Busy time rather than a share of the wall clock, so a faster phase is not charged for packing
  // the same work into less time.
  const loopMsPerGb = (x: PhaseResult): number => (x.elu * x.wallNs) / 1e6 / (x.bytes / 1e9);
  const perRepWidth = Math.max(26, reps * 6 + 2);
  console.log('');
  console.log(
    `${pad('phase', 34)}${pad('GB/s per rep', perRepWidth)}${pad('median GB/s', 13)}${pad('CPU-s/GB', 10)}` +
      `${pad('main CPU-ms/GB', 16)}${pad('loop busy ms/GB', 17)}${pad('workers ms/GB', 15)}entry p50 ms`,
  );
  console.log(
    `${pad('PayloadPool.fill (1 thread)', 34)}${pad(fillRates.map((x) => x.toFixed(2)).join(' '), perRepWidth)}${pad(median(fillRates).toFixed(2), 13)}${pad('-', 10)}${pad('-', 16)}${pad('-', 17)}${pad('-', 15)}-`,
  );
  for (const row of rows) {
    const rates = row.results.map((x) => gbPerSec(x.bytes, x.wallNs));
    const cpuPerGb = median(row.results.map((x) => x.cpuUs / 1e6 / (x.bytes / 1e9)));
    const entryMs = median(row.results.flatMap((x) => x.entryNs)) / 1e6;
    console.log(
      `${pad(row.phase, 34)}${pad(rates.map((x) => x.toFixed(2)).join(' '), perRepWidth)}${pad(median(rates).toFixed(2), 13)}${pad(cpuPerGb.toFixed(3), 10)}` +
        `${pad(median(row.results.map(mainMsPerGb)).toFixed(1), 16)}${pad(median(row.results.map(loopMsPerGb)).toFixed(1), 17)}` +
        `${pad(median(row.results.map((x) => x.workerBusyNs / 1e6 / (x.bytes / 1e9))).toFixed(1), 15)}${entryMs.toFixed(1)}`,
    );
  }
  // Reps pair up: the two writes of a rep ran a minute apart at most, on the same disk state.
  const paired = (f: (x: PhaseResult) => number): number[] => rows[1].results.map((after, r) => f(after) / f(rows[0].results[r]));
  const list = (xs: number[]): string => xs.map((x) => x.toFixed(2)).join(' ');
  const rateRatios = paired((x) => gbPerSec(x.bytes, x.wallNs));
  const mainRatios = paired(mainMsPerGb);
  const loopRatios = paired(loopMsPerGb);
  console.log(
    `\nwrite, restamp in workers ÷ on main (paired by rep): GB/s ${median(rateRatios).toFixed(2)} (per rep ${list(rateRatios)}); ` +
      `main-thread CPU/GB ${median(mainRatios).toFixed(2)} (${list(mainRatios)}); loop busy/GB ${median(loopRatios).toFixed(2)} (${list(loopRatios)})`,
  );
  const restamped = { before: inlineStore.payloadChunks, after: store.payloadChunks };
  console.log(
    `payload chunks restamped/filled: before ${restamped.before.restamped}/${restamped.before.filled}, after ${restamped.after.restamped}/${restamped.after.filled}`,
  );
  // BytePool's own count of the time its jobs ran inline on the main thread (the restamps, before).
  const writtenGb = (row: (typeof rows)[number]): number => row.results.reduce((n, x) => n + x.bytes, 0) / 1e9;
  console.log(
    `BytePool jobs run inline on the main thread: before ${(inlinePool.utilisation().inlineBusyNs / 1e6 / writtenGb(rows[0])).toFixed(1)} ms per GB written, ` +
      `after ${(bytePool.utilisation().inlineBusyNs / 1e6 / writtenGb(rows[1])).toFixed(1)} (its reads included)`,
  );
  console.log(
    'GB = 1e9 bytes. CPU-s/GB counts this process (main and worker threads, libuv I/O threads); main CPU-ms/GB the main thread only; ' +
      'loop busy ms/GB its event loop not idle (perf_hooks eventLoopUtilization × wall); workers ms/GB the byte workers\' time on jobs (wall, so it grows when they wait for a core).',
  );
}

await main();
