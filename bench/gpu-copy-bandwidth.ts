// Host↔device copy bandwidth of kvbench's GPU tier next to PyTorch's pinned copies, in one run on
// one GPU. Repetitions alternate kvbench and torch, because only numbers taken side by side compare.
//
//   node bench/gpu-copy-bandwidth.ts [--entry-mib 256] [--total-gib 4] [--chunk-mib 16,64]
//        [--copy-threads 2[,1,4...]] [--budget-gib 8] [--reps 3] [--python python3] [--no-torch]
//        [--torch-timeout-s 120] [--time-limit-s N] [--library libcuda.so.1] [--json out.json]
//
// Needs: an NVIDIA GPU and driver, Node 24 with this project's node_modules (koffi), and for the
// torch side python3 with a CUDA build of torch. Paths measured, each over --total-gib per
// direction per repetition, entries of --entry-mib moved one at a time:
//   kvbench tier    GpuTier.write / GpuTier.read: pinned staging, copy worker threads, chunked
//                   async copies, each chunk waited for: the tier's copy path, with no source or
//                   sink work (no payload fill), one entry and one direction at a time. A run's GPU
//                   tier also fills payload and moves both directions at once through the same copy
//                   threads, so the verdict says what the copy machinery reaches, not what a run gets.
//   driver direct   cuMemcpyHtoD_v2 / cuMemcpyDtoH_v2 on this thread, chunk by chunk, from the
//                   same pinned staging: what the FFI alone costs, without the workers
//   torch           bench/torch_pinned_copy.py: .cuda(non_blocking=True), copy_(…, non_blocking=True)
//                   on pin_memory=True tensors, each synchronised
// Diagnostics, shown beside the criterion but never judged, so that a FAIL is explained by the same
// call (the lent GPU machine's time is scarce): the tier with each further --copy-threads count, and
// torch moving each entry in the tier's chunk sizes on one stream (copy_ per chunk, one sync per
// entry). If torch's chunked copies fall short too, the chunk size is what costs; if more copy
// threads close the gap, the tier's concurrency is.
// Every path gets the same 2 untimed entries per direction first (torch's --warmup), and device 0's
// primary context is held for the whole run, so no path pays for creating it.
//
// The criterion (issue #7): the kvbench tier's copy path, with the first --copy-threads count (the engine's 2), reaches ≥ 90 % of torch per direction and chunk size,
// medians against medians; for H2D against the better of torch's two variants (copy_ into a
// preallocated tensor is the comparable one: the tier's memory is reserved up front too). One line
// beginning "CRITERION gpu-copy:" states it; gpu-check.sh collects it.
//
// Each path's failure is recorded and the others go on; every sample is printed when taken, and the
// JSON is rewritten, with the verdict on the repetitions so far, after every repetition, so a run cut
// short keeps what it measured. --time-limit-s starts no measurement once that many seconds have
// passed and goes straight to the verdict: a caller with a hard limit (gpu-check.sh) still gets its
// CRITERION line, judged on the repetitions that finished.
// GB/s are 1e9 bytes per second. A round trip of payload bytes through the tier is verified too.

import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { keyHash64, PayloadPool } from '../src-main/engine/io/payload.ts';
import type { CudaDriver } from '../src-main/engine/tiers/gpu/cuda-driver.ts';
import { GpuTier } from '../src-main/engine/tiers/gpu/gpu-tier.ts';
import { loadCudaDriver } from '../src-main/engine/tiers/gpu/koffi-cuda-driver.ts';
import { PinnedStaging } from '../src-main/engine/tiers/gpu/pinned-staging.ts';
import { probeCudaDriver } from '../src-main/hardware/gpu-driver.ts';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
const WARM_UP_ENTRIES = 2;
const CRITERION_RATIO = 0.9;

const { values } = parseArgs({
  options: {
    'entry-mib': { type: 'string', default: '256' },
    'total-gib': { type: 'string', default: '4' },
    'chunk-mib': { type: 'string', default: '16,64' },
    'copy-threads': { type: 'string', default: '2' },
    'budget-gib': { type: 'string', default: '8' },
    reps: { type: 'string', default: '3' },
    python: { type: 'string', default: 'python3' },
    'no-torch': { type: 'boolean', default: false },
    'torch-timeout-s': { type: 'string', default: '120' },
    'time-limit-s': { type: 'string' },
    library: { type: 'string' },
    json: { type: 'string' },
  },
});

const entryBytes = Number(values['entry-mib']) * MiB;
const totalBytes = Number(values['total-gib']) * GiB;
const chunkSizes = values['chunk-mib']!.split(',').map((s) => Number(s) * MiB);
const [copyThreads, ...diagnosticCopyThreads] = values['copy-threads']!.split(',').map(Number);
const budgetBytes = Math.floor(Number(values['budget-gib']) * GiB);
const reps = Number(values.reps);
const torchTimeoutMs = Number(values['torch-timeout-s']) * 1000;
const timeLimitS = values['time-limit-s'] === undefined ? null : Number(values['time-limit-s']);
if (timeLimitS !== null && !(timeLimitS >= 0)) throw new Error(`--time-limit-s takes a number of seconds ≥ 0: ${values['time-limit-s']}`);
const benchStartMs = performance.now();
const entriesPerRep = Math.max(1, Math.floor(totalBytes / entryBytes));
const torchScript = fileURLToPath(new URL('./torch_pinned_copy.py', import.meta.url));

const gbps = (bytes: number, ns: number): number => bytes / ns;
const message = (err: unknown): string => (err instanceof Error ? `${err.name}: ${err.message}` : String(err));

type Sample = { h2d: number; d2h: number };
/** A row of the table: d2h null where the row measures no D2H of its own (torch measures one). */
type Row = { h2d: number; d2h: number | null };
type TierSample = Sample & { copyH2d: number | null; copyD2h: number | null; pinned: boolean; budgetBytes: number; shortfall: string | null };
type DirectSample = Sample & { pinned: boolean };

const samples = new Map<string, Row[]>();
const tierSamples = new Map<number, TierSample[]>();
const details: Record<string, unknown>[] = [];
const errors: { rep: number | null; path: string; chunkBytes?: number; error: string }[] = [];
for (const t of [copyThreads, ...diagnosticCopyThreads]) {
  if (!Number.isInteger(t) || t < 1) throw new Error(`--copy-threads takes positive integers, comma-separated: ${values['copy-threads']}`);
}
const out: Record<string, unknown> = { entryBytes, entriesPerRep, reps, copyThreads, diagnosticCopyThreads, budgetBytes, chunkSizes, warmUpEntries: WARM_UP_ENTRIES };

/** Rewrites the JSON (through a temporary file, so a kill mid-write leaves the previous one whole). */
function writeJson(): void {
  if (!values.json) return;
  const body = { ...out, samples: Object.fromEntries(samples), details, errors };
  fs.writeFileSync(`${values.json}.tmp`, JSON.stringify(body, null, 2));
  fs.renameSync(`${values.json}.tmp`, values.json);
}

function fail(rep: number | null, path: string, err: unknown, chunkBytes?: number): void {
  const e = { rep, path, ...(chunkBytes === undefined ? {} : { chunkBytes }), error: message(err) };
  errors.push(e);
  console.log(`${rep === null ? '' : `rep ${rep}, `}${path}${chunkBytes === undefined ? '' : `, ${chunkBytes / MiB} MiB chunks`}: FAILED: ${e.error}`);
}

const probe = await probeCudaDriver({ libraryPath: values.library });
out.probe = probe;
if (!probe.available) {
  console.error(`no GPU to measure: ${probe.reason}`);
  out.error = probe.reason;
  writeJson();
  process.exit(2);
}
const loaded = await loadCudaDriver({ libraryPath: values.library });
if (!loaded.ok) throw new Error(loaded.reason);
const driver = loaded.driver;
const gpu0 = probe.devices[0];
console.log(
  `GPU 0: ${gpu0.name}, ${(gpu0.totalMemoryBytes / GiB).toFixed(1)} GiB, PCI ${gpu0.pciBusId ?? '?'}; ` +
    `NVIDIA driver ${probe.driverVersion ?? '?'} (supports CUDA ${probe.cudaVersion})`,
);
console.log(
  `entries of ${entryBytes / MiB} MiB, ${entriesPerRep} per direction per repetition (${((entriesPerRep * entryBytes) / GiB).toFixed(2)} GiB) ` +
    `after ${WARM_UP_ENTRIES} untimed, ${reps} repetitions alternating kvbench and torch; tier budget ${budgetBytes / GiB} GiB, ${copyThreads} copy threads` +
    (diagnosticCopyThreads.length ? ` (and ${diagnosticCopyThreads.join(', ')} as diagnostics)` : ''),
);

// Held until the end: each tier and the direct path would otherwise create and destroy device 0's
// primary context (hundreds of milliseconds, and cold first copies) inside what they time.
driver.cuInit(0);
const dev0 = driver.cuDeviceGet(0);
driver.cuDevicePrimaryCtxRetain(dev0);

/** kvbench's GPU tier: writes then reads, one entry at a time, a batch that fits the budget at a time. */
async function measureTier(chunkBytes: number, threads = copyThreads): Promise<TierSample> {
  const tier = await GpuTier.open({ driver, numGpus: 1, perDeviceBudgetBytes: budgetBytes, chunkBytes, copyThreads: threads });
  try {
    const entry = (key: string) => ({ key, keyHash: 1n, sizeBytes: entryBytes });
    for (let i = 0; i < WARM_UP_ENTRIES; i++) await tier.write(entry(`w${i}`), async () => undefined);
    for (let i = 0; i < WARM_UP_ENTRIES; i++) await tier.read(entry(`w${i}`));
    for (let i = 0; i < WARM_UP_ENTRIES; i++) await tier.remove(entry(`w${i}`));
    tier.resetCopyStats();
    const batch = Math.max(1, Math.min(entriesPerRep, Math.floor((tier.budgetBytes * 0.9) / entryBytes)));
    let h2dNs = 0;
    let d2hNs = 0;
    let moved = 0;
    let n = 0;
    while (moved < entriesPerRep) {
      const keys: string[] = [];
      for (let i = 0; i < batch && moved + i < entriesPerRep; i++) keys.push(`b${n++}`);
      for (const key of keys) h2dNs += (await tier.write(entry(key), async () => undefined)).durationNs;
      for (const key of keys) d2hNs += (await tier.read(entry(key))).durationNs;
      for (const key of keys) await tier.remove(entry(key));
      moved += keys.length;
    }
    const r = tier.report();
    const bytes = entriesPerRep * entryBytes;
    return {
      h2d: gbps(bytes, h2dNs),
      d2h: gbps(bytes, d2hNs),
      copyH2d: r.h2d.bandwidthBytesPerSec === null ? null : r.h2d.bandwidthBytesPerSec / 1e9,
      copyD2h: r.d2h.bandwidthBytesPerSec === null ? null : r.d2h.bandwidthBytesPerSec / 1e9,
      pinned: r.stagingPinned,
      budgetBytes: r.reservedBytes,
      shortfall: r.shortfallReason,
    };
  } finally {
    await tier.close();
  }
}

/** The FFI alone: synchronous driver copies on this thread from one pinned staging buffer. */
async function measureDirect(d: CudaDriver, chunkBytes: number): Promise<DirectSample> {
  const ctx = d.cuDevicePrimaryCtxRetain(dev0);
  d.cuCtxSetCurrent(ctx);
  const staging = PinnedStaging.create(d, chunkBytes, 1);
  let ptr: number | null = null;
  try {
    ptr = d.cuMemAlloc(entryBytes);
    const dptr = ptr;
    const slot = await staging.acquire();
    d.cuCtxSetCurrent(ctx);
    // cuMemcpyHtoD from pageable memory (staging that could not be pinned) returns once the bytes
    // are in the driver's own buffer, before they reach the device: wait for the device each time.
    const h2d = (): void => {
      for (let off = 0; off < entryBytes; off += chunkBytes) d.cuMemcpyHtoD(dptr + off, slot.buffer.subarray(0, Math.min(chunkBytes, entryBytes - off)));
      d.cuCtxSynchronize();
    };
    const d2h = (): void => {
      for (let off = 0; off < entryBytes; off += chunkBytes) d.cuMemcpyDtoH(slot.buffer.subarray(0, Math.min(chunkBytes, entryBytes - off)), dptr + off);
      d.cuCtxSynchronize();
    };
    for (let e = 0; e < WARM_UP_ENTRIES; e++) {
      h2d();
      d2h();
    }
    let h2dNs = 0;
    let d2hNs = 0;
    for (let e = 0; e < entriesPerRep; e++) {
      let t0 = process.hrtime.bigint();
      h2d();
      h2dNs += Number(process.hrtime.bigint() - t0);
      t0 = process.hrtime.bigint();
      d2h();
      d2hNs += Number(process.hrtime.bigint() - t0);
    }
    const bytes = entriesPerRep * entryBytes;
    return { h2d: gbps(bytes, h2dNs), d2h: gbps(bytes, d2hNs), pinned: staging.pinned };
  } finally {
    d.cuCtxSetCurrent(ctx);
    if (ptr !== null) d.cuMemFree(ptr);
    staging.unregister();
    d.cuDevicePrimaryCtxRelease(dev0);
  }
}

type TorchChunked = { chunk_bytes: number; h2d_gbps: number; d2h_gbps: number };
type TorchResult =
  | { ok: true; h2dAlloc: number; h2dInto: number; d2hInto: number; chunked: TorchChunked[]; raw: Record<string, unknown> }
  | { ok: false; error: string };

function measureTorch(): TorchResult {
  const r = spawnSync(
    values.python!,
    [
      torchScript,
      '--entry-bytes', String(entryBytes),
      '--total-bytes', String(entriesPerRep * entryBytes),
      '--warmup', String(WARM_UP_ENTRIES),
      '--chunk-bytes', chunkSizes.join(','),
    ],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: torchTimeoutMs, killSignal: 'SIGKILL' },
  );
  if (r.error) {
    const timedOut = (r.error as NodeJS.ErrnoException).code === 'ETIMEDOUT';
    return { ok: false, error: timedOut ? `${torchScript} did not finish within ${torchTimeoutMs / 1000} s (killed)` : `${values.python}: ${r.error.message}` };
  }
  const line = r.stdout.trim().split('\n').at(-1) ?? '';
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return { ok: false, error: `no JSON from ${torchScript} (exit ${r.status}, signal ${r.signal}): ${r.stdout.slice(-500)}` };
  }
  if (raw.ok !== true) return { ok: false, error: String(raw.error) };
  // An older torch script has no chunked copies: the diagnostic rows are then absent, nothing else.
  const chunked = Array.isArray(raw.chunked) ? (raw.chunked as TorchChunked[]) : [];
  return { ok: true, h2dAlloc: raw.h2d_alloc_gbps as number, h2dInto: raw.h2d_into_gbps as number, d2hInto: raw.d2h_into_gbps as number, chunked, raw };
}

/** One payload entry through the tier and back, checked block by block. */
async function verifyRoundTrip(chunkBytes: number): Promise<boolean> {
  const pool = PayloadPool.create(11, 16 * MiB);
  const tier = await GpuTier.open({ driver, numGpus: 1, perDeviceBudgetBytes: 256 * MiB, chunkBytes, copyThreads });
  try {
    const size = 3 * chunkBytes + 4096 * 5;
    const keyHash = keyHash64('verify', 11);
    await tier.write({ key: 'v', keyHash, sizeBytes: size }, async (c) => pool.fill(c.buffer, keyHash, c.entryOffsetBytes));
    let ok = true;
    await tier.read({ key: 'v', keyHash, sizeBytes: size }, async (c) => {
      if (!pool.verify(c.buffer, keyHash, c.entryOffsetBytes).ok) ok = false;
    });
    return ok;
  } finally {
    await tier.close();
  }
}

const fmt = (s: Sample): string => `H2D ${s.h2d.toFixed(2)} GB/s, D2H ${s.d2h.toFixed(2)} GB/s`;
const add = (path: string, s: Row): void => {
  if (!samples.has(path)) samples.set(path, []);
  samples.get(path)!.push({ h2d: s.h2d, d2h: s.d2h });
};

let verified: boolean | null = null;
try {
  verified = await verifyRoundTrip(chunkSizes[0]);
  console.log(`payload round trip through the GPU tier: ${verified ? 'bytes intact' : 'CORRUPTED'}`);
} catch (err) {
  fail(null, 'payload round trip', err);
}
out.verified = verified;
writeJson();

let torchError: string | null = null;
let torchInfo: Record<string, unknown> | null = null;
const torchSamples: { h2dAlloc: number; h2dInto: number; d2hInto: number }[] = [];
let repsDone = 0;
/** Why measuring stopped before every repetition was taken (--time-limit-s); null while it goes on. */
let stoppedBy: string | null = null;
/** True once --time-limit-s has passed (said once): no measurement starts after that. */
function timeUp(): boolean {
  if (stoppedBy === null && timeLimitS !== null && performance.now() - benchStartMs >= timeLimitS * 1000) {
    stoppedBy = `stopped by --time-limit-s ${timeLimitS} after ${repsDone} of ${reps} repetitions`;
    console.log(`${stoppedBy}: no further measurement starts; the verdict is on what was measured`);
  }
  return stoppedBy !== null;
}
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

// The criterion, per direction and chunk size, on the samples taken so far.
type Cell = { kvbenchGbps: number; torchGbps: number; ratio: number; pass: boolean };
type Criterion = {
  threshold: number;
  status: 'PASS' | 'FAIL' | 'INVALID' | 'INCOMPLETE' | 'NOT MEASURED';
  reason: string | null;
  reference: string;
  /** Repetitions asked for, and those taken whole (fewer when --time-limit-s stopped the run). */
  repetitions: number;
  repetitionsDone: number;
  perChunk: Record<string, { h2d: Cell | null; d2h: Cell | null }>;
};
function judge(): Criterion {
  const criterion: Criterion = {
    threshold: CRITERION_RATIO,
    status: 'NOT MEASURED',
    reason: null,
    reference: 'medians; H2D: max(torch .cuda(non_blocking), torch copy_ into preallocated); D2H: torch copy_ into pinned',
    repetitions: reps,
    repetitionsDone: repsDone,
    perChunk: {},
  };
  const unpinned = [...tierSamples.values()].flat().some((t) => !t.pinned);
  let missing = chunkSizes.filter((c) => !tierSamples.get(c)?.length).length;
  if (torchSamples.length > 0) {
    const torchH2d = Math.max(median(torchSamples.map((t) => t.h2dAlloc)), median(torchSamples.map((t) => t.h2dInto)));
    const torchD2h = median(torchSamples.map((t) => t.d2hInto));
    const cell = (k: number, ref: number): Cell => ({ kvbenchGbps: k, torchGbps: ref, ratio: k / ref, pass: k / ref >= CRITERION_RATIO });
    for (const chunk of chunkSizes) {
      const k = tierSamples.get(chunk);
      criterion.perChunk[`${chunk / MiB} MiB`] = k?.length
        ? { h2d: cell(median(k.map((x) => x.h2d)), torchH2d), d2h: cell(median(k.map((x) => x.d2h)), torchD2h) }
        : { h2d: null, d2h: null };
    }
  } else missing = chunkSizes.length;
  const cells = Object.values(criterion.perChunk).flatMap((c) => [c.h2d, c.d2h]).filter((c): c is Cell => c !== null);
  if (unpinned) {
    criterion.status = 'INVALID';
    criterion.reason = 'staging not pinned (cuMemHostRegister refused it): the tier copied from pageable memory, torch from pinned';
  } else if (torchSamples.length === 0) {
    criterion.reason = `torch not measured: ${torchError ?? (values['no-torch'] ? '--no-torch' : stoppedBy !== null ? 'the time limit came first' : 'no samples')}`;
  } else if (cells.some((c) => !c.pass)) criterion.status = 'FAIL';
  else if (missing > 0) {
    criterion.status = cells.length > 0 ? 'INCOMPLETE' : 'NOT MEASURED';
    criterion.reason = `no kvbench tier samples for ${missing} of ${chunkSizes.length} chunk sizes`;
  } else criterion.status = 'PASS';
  if (stoppedBy !== null) criterion.reason = criterion.reason === null ? stoppedBy : `${criterion.reason}; ${stoppedBy}`;
  return criterion;
}

for (let rep = 1; rep <= reps && !timeUp(); rep++) {
  // What the verdict needs first (the tier with the judged thread count, then torch), the
  // diagnostics after: a run that --time-limit-s cuts short still has a comparison.
  for (const chunk of chunkSizes) {
    if (timeUp()) break;
    try {
      const t = await measureTier(chunk);
      add(`kvbench tier, ${chunk / MiB} MiB chunks`, t);
      if (!tierSamples.has(chunk)) tierSamples.set(chunk, []);
      tierSamples.get(chunk)!.push(t);
      // Bytes ÷ summed copy time: copies in flight together share the link, so this is no link rate.
      if (t.copyH2d !== null && t.copyD2h !== null) add(`  kvbench tier per copy, ${chunk / MiB} MiB chunks (copies in flight share the link: not a link rate)`, { h2d: t.copyH2d, d2h: t.copyD2h });
      details.push({ rep, path: 'tier', chunkBytes: chunk, ...t });
      console.log(`rep ${rep}, kvbench tier, ${chunk / MiB} MiB chunks: ${fmt(t)}; staging ${t.pinned ? 'pinned' : 'NOT pinned'}${t.shortfall ? `; ${t.shortfall}` : ''}`);
    } catch (err) {
      fail(rep, 'kvbench tier', err, chunk);
    }
  }
  // A torch that is missing or broken stays so: no point in paying for it every repetition.
  if (!values['no-torch'] && torchError === null && !timeUp()) {
    const t = measureTorch();
    if (t.ok) {
      add('torch .cuda(non_blocking) / copy_ into pinned', { h2d: t.h2dAlloc, d2h: t.d2hInto });
      // Torch measures one D2H (copy_ into pinned): the row above has it.
      add('torch copy_ into preallocated', { h2d: t.h2dInto, d2h: null });
      torchSamples.push({ h2dAlloc: t.h2dAlloc, h2dInto: t.h2dInto, d2hInto: t.d2hInto });
      for (const c of t.chunked) add(`torch, ${c.chunk_bytes / MiB} MiB chunks on one stream (diagnostic)`, { h2d: c.h2d_gbps, d2h: c.d2h_gbps });
      torchInfo = t.raw;
      details.push({ rep, path: 'torch', ...t.raw });
      console.log(`rep ${rep}, torch: H2D .cuda() ${t.h2dAlloc.toFixed(2)} GB/s, H2D copy_ into preallocated ${t.h2dInto.toFixed(2)} GB/s, D2H ${t.d2hInto.toFixed(2)} GB/s`);
      for (const c of t.chunked) console.log(`rep ${rep}, torch, ${c.chunk_bytes / MiB} MiB chunks on one stream (diagnostic): H2D ${c.h2d_gbps.toFixed(2)} GB/s, D2H ${c.d2h_gbps.toFixed(2)} GB/s`);
      if (t.raw.chunked_error) console.log(`rep ${rep}, torch, chunked copies (diagnostic) FAILED: ${String(t.raw.chunked_error)}`);
    } else {
      torchError = t.error;
      fail(rep, 'torch', t.error);
    }
  }
  for (const chunk of chunkSizes) {
    if (timeUp()) break;
    try {
      const d = await measureDirect(driver, chunk);
      add(`driver direct, ${chunk / MiB} MiB chunks`, d);
      details.push({ rep, path: 'direct', chunkBytes: chunk, ...d });
      console.log(`rep ${rep}, driver direct, ${chunk / MiB} MiB chunks: ${fmt(d)}; staging ${d.pinned ? 'pinned' : 'NOT pinned'}`);
    } catch (err) {
      fail(rep, 'driver direct', err, chunk);
    }
    for (const threads of diagnosticCopyThreads) {
      if (timeUp()) break;
      try {
        const t = await measureTier(chunk, threads);
        add(`kvbench tier, ${chunk / MiB} MiB chunks, ${threads} copy threads (diagnostic)`, t);
        details.push({ rep, path: 'tier-diagnostic', chunkBytes: chunk, copyThreads: threads, ...t });
        console.log(`rep ${rep}, kvbench tier, ${chunk / MiB} MiB chunks, ${threads} copy threads (diagnostic): ${fmt(t)}`);
      } catch (err) {
        fail(rep, `kvbench tier, ${threads} copy threads (diagnostic)`, err, chunk);
      }
    }
  }
  if (stoppedBy === null) repsDone = rep;
  out.torch = torchInfo;
  out.torchError = torchError;
  // The verdict so far: a run killed before its end still leaves one in the JSON.
  out.criterion = judge();
  writeJson();
  console.log(stoppedBy === null ? `repetition ${rep}/${reps} done` : `repetition ${rep}/${reps} cut short`);
}
try {
  driver.cuDevicePrimaryCtxRelease(dev0);
} catch {
  // the process ends next; the driver frees the context with it
}

const cell = (xs: (number | null)[]): string => {
  const ns = xs.filter((x): x is number => x !== null);
  if (ns.length === 0) return `${'—'.padStart(6)} (same D2H as the row above)`;
  return `${median(ns).toFixed(2).padStart(6)} [${Math.min(...ns).toFixed(2)}–${Math.max(...ns).toFixed(2)}]`;
};

console.log('');
if (torchInfo) console.log(`torch ${torchInfo.torch_version} (built with CUDA ${torchInfo.cuda_version}) on ${torchInfo.device_name}; its round trip verified: ${torchInfo.verified}`);
if (torchError) console.log(`torch side not measured: ${torchError}`);
const pathWidth = Math.max(48, ...[...samples.keys()].map((p) => p.length + 1));
console.log(`${'path'.padEnd(pathWidth)} ${'H2D GB/s median [min–max]'.padEnd(28)} D2H GB/s median [min–max]`);
for (const [path, xs] of samples) {
  console.log(`${path.padEnd(pathWidth)} ${cell(xs.map((x) => x.h2d)).padEnd(28)} ${cell(xs.map((x) => x.d2h))}`);
}

const criterion = judge();
out.criterion = criterion;
// Kept for readers of earlier files: the same ratios, without the verdicts.
out.ratios = Object.fromEntries(Object.entries(criterion.perChunk).map(([k, c]) => [k, { h2d: c.h2d?.ratio ?? null, d2h: c.d2h?.ratio ?? null }]));
writeJson();

console.log('');
console.log(`kvbench tier / torch (${criterion.reference}):`);
for (const [size, c] of Object.entries(criterion.perChunk)) {
  const show = (x: Cell | null): string => (x === null ? 'not measured' : `${x.ratio.toFixed(3)} ${x.pass ? 'pass' : 'FAIL'} (${x.kvbenchGbps.toFixed(2)} vs ${x.torchGbps.toFixed(2)} GB/s)`);
  console.log(`  ${size.padStart(7)} chunks: H2D ${show(c.h2d)}; D2H ${show(c.d2h)}`);
}
const cellsText = Object.entries(criterion.perChunk)
  .map(([size, c]) => `${size} H2D ${c.h2d ? c.h2d.ratio.toFixed(2) : '—'} D2H ${c.d2h ? c.d2h.ratio.toFixed(2) : '—'}`)
  .join(', ');
console.log(
  `CRITERION gpu-copy: ${criterion.status} (kvbench tier's copy path ≥ ${CRITERION_RATIO * 100} % of torch per direction and chunk size; no source/sink work, one entry and one direction at a time)` +
    `${cellsText ? `: ${cellsText}` : ''}${criterion.reason ? `; ${criterion.reason}` : ''}`,
);

// Diagnostics (never judged): where a shortfall comes from, read off the same run's medians.
const medianOf = (path: string, dir: 'h2d' | 'd2h'): number | null => {
  const xs = (samples.get(path) ?? []).map((x) => x[dir]).filter((x): x is number => x !== null);
  return xs.length ? median(xs) : null;
};
const diagnosis: Record<string, unknown> = {};
const torchWhole = torchSamples.length
  ? { h2d: Math.max(median(torchSamples.map((t) => t.h2dAlloc)), median(torchSamples.map((t) => t.h2dInto))), d2h: median(torchSamples.map((t) => t.d2hInto)) }
  : null;
if (diagnosticCopyThreads.length || torchWhole) console.log('diagnostics (not judged):');
for (const chunk of chunkSizes) {
  const size = `${chunk / MiB} MiB`;
  const d: Record<string, unknown> = {};
  const torchParts: string[] = [];
  const tierParts: string[] = [];
  for (const dir of ['h2d', 'd2h'] as const) {
    const chunked = medianOf(`torch, ${size} chunks on one stream (diagnostic)`, dir);
    if (torchWhole && chunked !== null) {
      d[`torchChunkedOverWhole_${dir}`] = chunked / torchWhole[dir];
      torchParts.push(`${dir.toUpperCase()} ${(chunked / torchWhole[dir]).toFixed(2)}×`);
    }
    const byThreads = [copyThreads, ...diagnosticCopyThreads]
      .map((threads) => ({ threads, gbps: medianOf(threads === copyThreads ? `kvbench tier, ${size} chunks` : `kvbench tier, ${size} chunks, ${threads} copy threads (diagnostic)`, dir) }))
      .filter((x): x is { threads: number; gbps: number } => x.gbps !== null);
    if (byThreads.length > 1) {
      const best = byThreads.reduce((a, b) => (b.gbps > a.gbps ? b : a));
      d[`tierBestCopyThreads_${dir}`] = best.threads;
      d[`tierByCopyThreads_${dir}`] = Object.fromEntries(byThreads.map((x) => [x.threads, x.gbps]));
      tierParts.push(`${dir.toUpperCase()} ${byThreads.map((x) => `${x.threads}: ${x.gbps.toFixed(2)}`).join(', ')} GB/s`);
    }
  }
  diagnosis[size] = d;
  const parts = [
    ...(torchParts.length ? [`torch in ${size} chunks vs its whole-entry copies: ${torchParts.join(', ')}`] : []),
    ...(tierParts.length ? [`tier by copy threads: ${tierParts.join('; ')}`] : []),
  ];
  if (parts.length) console.log(`  ${size}: ${parts.join('; ')}`);
}
out.diagnosis = diagnosis;
writeJson();
if (errors.length > 0) console.log(`${errors.length} measurement(s) failed: see "errors" in the JSON`);
if (verified === false) process.exit(1);
// Numbers are kept either way; the exit code says that some path could not be measured.
if (errors.some((e) => e.path !== 'torch' && !e.path.endsWith('(diagnostic)'))) process.exit(3);
