// Payload generation before and after per-sector stamps, side by side in one run: the CPU cost of
// turning an I/O buffer that holds the pool into the next chunk (what storage writes do per
// chunk), duplicate 512 B / 1 / 2 / 4 KiB units over many keys and chunks, and how much
// compressors shrink the data. "before" is the layout up to this change (one 16-byte stamp per
// 4 KiB block), reproduced here as `stampBefore`; "after" is PayloadPool as it is now. Reps
// alternate before and after, because on a shared machine only numbers from the same minute
// compare: read the ratios, not the absolute times.
//
// Then where a restamp runs: the main thread's CPU per restamp done inline (as before storage writes
// handed large restamps to the byte workers) and done by a worker (what the main thread still pays:
// posting the job, taking the reply, waking up for it), for a few sizes, with one restamp in flight
// (one entry being written) and with --slots in flight (many). This is what sets BytePool's
// DEFAULT_RESTAMP_INLINE_BELOW_BYTES.
//
//   node bench/payload-cost.ts [--chunk-mib 16] [--slots 8] [--chunks-per-rep 512] [--reps 7]
//        [--dedup-gib 1] [--dedup-keys 32] [--workers 2]
//
// The pool is one chunk long, as in the engine (benchmark.ts), and restamps rotate over --slots
// buffers of one chunk each so the destination is not one cache-resident buffer. CPU time is this
// thread's (process.threadCpuUsage), so other processes on the machine do not inflate it.

import { hash } from 'node:crypto';
import { parseArgs } from 'node:util';
import zlib from 'node:zlib';
import { BytePool, DEFAULT_RESTAMP_INLINE_BELOW_BYTES } from '../src-main/engine/io/byte-workers.ts';
import { keyHash64, PAYLOAD_BLOCK_BYTES, PayloadPool } from '../src-main/engine/io/payload.ts';
import { fmt, median, table } from './lib/stats.ts';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
const SEED = 20261123;

const { values } = parseArgs({
  options: {
    'chunk-mib': { type: 'string', default: '16' },
    slots: { type: 'string', default: '8' },
    'chunks-per-rep': { type: 'string', default: '512' },
    reps: { type: 'string', default: '7' },
    'dedup-gib': { type: 'string', default: '1' },
    'dedup-keys': { type: 'string', default: '32' },
    workers: { type: 'string', default: '2' },
  },
});

const chunkBytes = Number(values['chunk-mib']) * MiB;
const slotCount = Number(values.slots);
const chunksPerRep = Number(values['chunks-per-rep']);
const reps = Number(values.reps);
const dedupBytes = Number(values['dedup-gib']) * GiB;
const dedupKeys = Number(values['dedup-keys']);
const workerThreads = Number(values.workers);

const pool = PayloadPool.create(SEED, chunkBytes);

/** The stamps as they were before this change: 16 bytes (key hash, block index) per 4 KiB only. */
function stampBefore(dest: Uint8Array, keyHash: bigint, entryOffsetBytes: number): void {
  const keyLo = Number(keyHash & 0xffffffffn);
  const keyHi = Number(keyHash >> 32n);
  const view = new DataView(dest.buffer, dest.byteOffset, dest.byteLength);
  let block = entryOffsetBytes / PAYLOAD_BLOCK_BYTES;
  for (let at = 0; at + 16 <= dest.length; at += PAYLOAD_BLOCK_BYTES, block++) {
    view.setUint32(at, keyLo, true);
    view.setUint32(at + 4, keyHi, true);
    view.setUint32(at + 8, block >>> 0, true);
    view.setUint32(at + 12, Math.floor(block / 0x1_0000_0000), true);
  }
}

type Variant = 'before' | 'after';
const stampers: Record<Variant, (dest: Uint8Array, keyHash: bigint, entryOffsetBytes: number) => void> = {
  before: stampBefore,
  after: (dest, keyHash, entryOffsetBytes) => pool.stamp(dest, keyHash, entryOffsetBytes),
};

function fillChunk(variant: Variant, dest: Uint8Array, keyHash: bigint, entryOffsetBytes: number): void {
  pool.copyPool(dest, entryOffsetBytes);
  stampers[variant](dest, keyHash, entryOffsetBytes);
}

// ---- CPU cost per chunk -------------------------------------------------------------------------

function threadCpuNs(): number {
  const u = process.threadCpuUsage();
  return (u.user + u.system) * 1000;
}

const keyHashes = Array.from({ length: 64 }, (_, i) => keyHash64(`bench/payload-${i}`, SEED));
const slots = Array.from({ length: slotCount }, () => new Uint8Array(new SharedArrayBuffer(chunkBytes)));
for (const slot of slots) fillChunk('after', slot, keyHashes[0], 0);

/** CPU-seconds per GB of payload produced by `op` over chunksPerRep chunks. */
function timeChunks(op: (slot: Uint8Array, keyHash: bigint, entryOffsetBytes: number) => void, chunks: number): number {
  const t0 = threadCpuNs();
  for (let i = 0; i < chunks; i++) op(slots[i % slotCount], keyHashes[i % keyHashes.length], (i >> 3) * chunkBytes);
  return (threadCpuNs() - t0) / 1e9 / ((chunks * chunkBytes) / 1e9);
}

const costRows: Array<{ name: string; op: (slot: Uint8Array, keyHash: bigint, entryOffsetBytes: number) => void; chunks: number }> = [
  { name: 'restamp, before (4 KiB stamps)', op: stampers.before, chunks: chunksPerRep },
  { name: 'restamp, after (512 B stamps)', op: stampers.after, chunks: chunksPerRep },
  // A full fill copies the pool: the per-byte pass that restamping avoids, for scale.
  { name: 'full fill (copy pool + stamps), after', op: (s, k, o) => fillChunk('after', s, k, o), chunks: Math.max(8, chunksPerRep / 16) },
];
// One untimed pass each: JIT warm-up.
for (const row of costRows) timeChunks(row.op, Math.min(row.chunks, 32));
const cost = costRows.map(() => [] as number[]);
for (let r = 0; r < reps; r++) costRows.forEach((row, i) => cost[i].push(timeChunks(row.op, row.chunks)));
const costMedian = cost.map((xs) => median(xs));

// ---- Where a restamp runs: the main thread's CPU, inline vs in a worker ---------------------------

const restampSizes = [1 * MiB, 2 * MiB, 4 * MiB, chunkBytes].filter((n, i, all) => n <= chunkBytes && all.indexOf(n) === i);
const bufferSlots = slots.map((u) => Buffer.from(u.buffer, u.byteOffset, u.byteLength));
const inlinePool = await BytePool.start({ threads: workerThreads, pool, restampInlineBelowBytes: Number.POSITIVE_INFINITY });
const workerPool = await BytePool.start({ threads: workerThreads, pool, restampInlineBelowBytes: 0 });

/** Main-thread CPU-µs per restamp of `sizeBytes`, `inFlight` at a time, over `count` restamps. */
async function mainCpuPerRestamp(bytePool: BytePool, sizeBytes: number, inFlight: number, count: number): Promise<number> {
  const t0 = threadCpuNs();
  let next = 0;
  const lane = async (slot: Buffer): Promise<void> => {
    while (next < count) {
      const i = next++;
      await bytePool.restamp(slot.subarray(0, sizeBytes), keyHashes[i % keyHashes.length], (i >> 3) * chunkBytes);
    }
  };
  await Promise.all(bufferSlots.slice(0, inFlight).map(lane));
  return (threadCpuNs() - t0) / 1000 / count;
}

const placements = [
  { name: 'inline', pool: inlinePool, inFlight: 1 },
  { name: `worker, 1 in flight`, pool: workerPool, inFlight: 1 },
  { name: `worker, ${slotCount} in flight`, pool: workerPool, inFlight: slotCount },
];
// µs per restamp, [size][placement][rep]; the same number of bytes per cell.
const mainUs = restampSizes.map(() => placements.map(() => [] as number[]));
const restampsFor = (sizeBytes: number): number => Math.max(16, Math.round((chunksPerRep * chunkBytes) / sizeBytes / 4));
for (const sizeBytes of restampSizes) for (const p of placements) await mainCpuPerRestamp(p.pool, sizeBytes, p.inFlight, 16);
for (let r = 0; r < reps; r++) {
  for (const [s, sizeBytes] of restampSizes.entries()) {
    for (const [p, placement] of placements.entries()) {
      mainUs[s][p].push(await mainCpuPerRestamp(placement.pool, sizeBytes, placement.inFlight, restampsFor(sizeBytes)));
    }
  }
}
await inlinePool.close();
await workerPool.close();

// ---- Dedup and compression ----------------------------------------------------------------------

const UNITS = [512, 1024, 2048, 4096];

/** Fraction of aligned units of each size in UNITS that repeat an earlier one, over dedupBytes. */
function dedup(variant: Variant): number[] {
  const seen = UNITS.map(() => new Set<string>());
  const dup = UNITS.map(() => 0);
  const total = UNITS.map(() => 0);
  const chunk = new Uint8Array(chunkBytes);
  const chunksPerKey = Math.max(1, Math.ceil(dedupBytes / chunkBytes / dedupKeys));
  let written = 0;
  for (let k = 0; written < dedupBytes; k++) {
    const keyHash = keyHash64(`bench/dedup-${k}`, SEED);
    for (let c = 0; c < chunksPerKey && written < dedupBytes; c++, written += chunkBytes) {
      fillChunk(variant, chunk, keyHash, c * chunkBytes);
      UNITS.forEach((unit, u) => {
        for (let at = 0; at < chunkBytes; at += unit) {
          const digest = hash('sha1', chunk.subarray(at, at + unit), 'base64');
          total[u]++;
          if (seen[u].has(digest)) dup[u]++;
          else seen[u].add(digest);
        }
      });
    }
  }
  return dup.map((d, u) => d / total[u]);
}

/** Compressed size ÷ input size for a few compressors, over `chunks` chunks of different keys. */
function compression(variant: Variant): Record<string, number> {
  const chunks = 4;
  const data = new Uint8Array(chunks * chunkBytes);
  for (let c = 0; c < chunks; c++) fillChunk(variant, data.subarray(c * chunkBytes, (c + 1) * chunkBytes), keyHashes[c], c * chunkBytes);
  const head = data.subarray(0, 4 * MiB);
  const zstdLong = zlib.zstdCompressSync(data, {
    params: {
      [zlib.constants.ZSTD_c_compressionLevel]: 3,
      [zlib.constants.ZSTD_c_enableLongDistanceMatching]: 1,
      [zlib.constants.ZSTD_c_windowLog]: 27,
    },
  });
  return {
    'gzip -6, 4 MiB': zlib.gzipSync(head).length / head.length,
    'zstd -3, 4 MiB': zlib.zstdCompressSync(head).length / head.length,
    [`zstd -3 --long=27, ${(chunks * chunkBytes) / MiB} MiB (${chunks} chunks)`]: zstdLong.length / data.length,
  };
}

const dedupResult = { before: dedup('before'), after: dedup('after') };
const zipResult = { before: compression('before'), after: compression('after') };

// ---- Report -------------------------------------------------------------------------------------

console.log(
  `payload-cost: pool = chunk = ${chunkBytes / MiB} MiB, ${slotCount} slots, ${chunksPerRep} restamps per rep, ${reps} reps alternating\n`,
);
const cpuOf = (i: number): string => fmt(costMedian[i] * 1000, 3);
console.log(
  table([
    ['payload generation', 'CPU-ms/GB (median)', 'per rep'],
    ...costRows.map((row, i) => [row.name, cpuOf(i), cost[i].map((x) => fmt(x * 1000, 2)).join(' ')]),
  ]),
);
const ratioAfterBefore = costMedian[1] / costMedian[0];
const ratiosPerRep = cost[1].map((x, r) => x / cost[0][r]);
console.log(
  `\nrestamp after ÷ before: ${fmt(ratioAfterBefore, 2)} (per rep ${ratiosPerRep.map((x) => fmt(x, 2)).join(' ')}); ` +
    `restamp after ÷ full fill: ${fmt(costMedian[1] / costMedian[2], 3)}`,
);

console.log(
  `\nrestamp: main-thread CPU-µs per restamp, median of ${reps} (ratio to inline); ${workerThreads} byte worker(s); ` +
    `BytePool restamps inline below ${DEFAULT_RESTAMP_INLINE_BELOW_BYTES / MiB} MiB`,
);
console.log(
  table([
    ['size', ...placements.map((p) => p.name)],
    ...restampSizes.map((sizeBytes, s) => {
      const inlineUs = median(mainUs[s][0]);
      return [
        `${sizeBytes / MiB} MiB`,
        ...placements.map((_, p) => (p === 0 ? fmt(inlineUs, 1) : `${fmt(median(mainUs[s][p]), 1)} (${fmt(median(mainUs[s][p]) / inlineUs, 2)})`)),
      ];
    }),
  ]),
);

console.log(`\nduplicate aligned units over ${fmt(dedupBytes / GiB, 2)} GiB (${dedupKeys} keys × chunks of ${chunkBytes / MiB} MiB):`);
console.log(
  table([
    ['unit', 'before', 'after'],
    ...UNITS.map((unit, u) => [`${unit} B`, `${fmt(dedupResult.before[u] * 100, 3)} %`, `${fmt(dedupResult.after[u] * 100, 3)} %`]),
  ]),
);

console.log('\ncompressed ÷ original (1.000 = incompressible):');
console.log(
  table([
    ['compressor', 'before', 'after'],
    ...Object.keys(zipResult.after).map((name) => [name, fmt(zipResult.before[name], 3), fmt(zipResult.after[name], 3)]),
  ]),
);
console.log('\nGB = 1e9 bytes. CPU is this (the main) thread only; compare ratios from the same run.');
