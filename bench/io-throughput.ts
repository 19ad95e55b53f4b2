// Side-by-side throughput of the storage I/O path: PayloadPool.fill on one thread, and
// EntryFileStore writes and reads (plain and with payload verification) in 16 MiB chunks with a
// fixed number in flight. Repetitions alternate write and read, because the disks here are noisy
// minutes apart and only numbers from the same run compare.
//
//   node bench/io-throughput.ts --dir DIR [--total-gib 1] [--chunk-mib 16] [--inflight 8]
//        [--entry-mib 128] [--concurrent-entries 2] [--threads 1] [--direct auto|on|off]
//        [--fsync per-entry|none] [--reps 3]

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
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
  cpuUs: number;
  entryNs: number[];
}

function gbPerSec(bytes: number, ns: number): number {
  return bytes / ns;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

async function runEntries(op: (index: number) => Promise<IoTiming>): Promise<PhaseResult> {
  const cpu0 = process.cpuUsage();
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
  return { bytes, wallNs, cpuUs: cpu.user + cpu.system, entryNs };
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
  const payload = PayloadPool.create(SEED);
  // One extra slot per concurrent entry: the chunk being filled while the others are in flight.
  const slab = new AlignedSlab(chunkBytes, inflight + concurrentEntries);
  const bytePool = await BytePool.start({ threads, pool: payload });
  const store = await EntryFileStore.open({ dir: runDir, directIo, chunkBytes, perEntryDepth, slab, bytes: bytePool, fsync: fsyncMode });
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
    { phase: 'write (payload fill in workers)', results: [] },
    { phase: 'read', results: [] },
    { phase: 'read + verify in workers', results: [] },
  ];
  try {
    for (let r = 0; r < reps; r++) {
      rows[0].results.push(await runEntries((i) => store.write(keys[i], entrySize(i), store.payloadSource(hashes[i]))));
      rows[1].results.push(await runEntries((i) => store.read(keys[i], entrySize(i))));
      rows[2].results.push(
        await runEntries((i) => {
          const sink: ChunkSink = store.verifyingSink(keys[i], hashes[i]);
          return store.read(keys[i], entrySize(i), { sink });
        }),
      );
      for (const key of keys) await store.delete(key);
    }
  } finally {
    await store.removeAll();
    await bytePool.close();
  }

  const pad = (s: string, n: number): string => s.padEnd(n);
  console.log('');
  console.log(`${pad('phase', 34)}${pad('GB/s per rep', 26)}${pad('median GB/s', 13)}${pad('CPU-s/GB', 10)}entry p50 ms`);
  console.log(
    `${pad('PayloadPool.fill (1 thread)', 34)}${pad(fillRates.map((x) => x.toFixed(2)).join(' '), 26)}${pad(median(fillRates).toFixed(2), 13)}${pad('-', 10)}-`,
  );
  for (const row of rows) {
    const rates = row.results.map((x) => gbPerSec(x.bytes, x.wallNs));
    const cpuPerGb = median(row.results.map((x) => x.cpuUs / 1e6 / (x.bytes / 1e9)));
    const entryMs = median(row.results.flatMap((x) => x.entryNs)) / 1e6;
    console.log(
      `${pad(row.phase, 34)}${pad(rates.map((x) => x.toFixed(2)).join(' '), 26)}${pad(median(rates).toFixed(2), 13)}${pad(cpuPerGb.toFixed(3), 10)}${entryMs.toFixed(1)}`,
    );
  }
  const u = bytePool.utilisation();
  console.log(`\nbyte workers busy ${(u.busyNs / 1e9).toFixed(2)} s of ${(u.wallNs / 1e9).toFixed(2)} s wall × ${u.threads} thread(s)`);
  console.log('GB = 1e9 bytes. CPU-s/GB counts this process (main and worker threads, libuv I/O threads).');
}

await main();
