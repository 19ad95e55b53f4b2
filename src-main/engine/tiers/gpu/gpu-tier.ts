import type { ChunkProgress, ChunkSink, ChunkSource, ChunkView, EntryRef, OpTiming, TierBackend } from '../tier-backend.ts';
import { formatCudaVersion, type CUcontext, type CudaDriver } from './cuda-driver.ts';
import { CopyBusyUnion, type CopyInterval } from './copy-busy-union.ts';
import { InlineCopyEngine, isSharedView, WorkerCopyEngine, type CopyEngine } from './copy-engine.ts';
import type { CopyDirection, CopySegment } from './copy-executor.ts';
import { DeviceArena, type DeviceExtent, type DeviceHeadroom } from './device-arena.ts';
import { PinnedStaging, type StagingSlot } from './pinned-staging.ts';
import { readNvidiaDriverVersion } from './nvidia-version.ts';
import { onProcessExit } from './process-exit.ts';

/** On the exit path, how long a copy already inside the driver may take to finish before memory is freed anyway. */
const EXIT_COPY_DRAIN_MS = 2_000;

const MIB = 1024 * 1024;
export const DEFAULT_GPU_COPY_THREADS = 2;
export const DEFAULT_GPU_SLAB_BYTES = 256 * MIB;
export const DEFAULT_GPU_MIN_SLAB_BYTES = 2 * MIB;
/** Left free on each GPU: the driver, other processes and kernels' workspaces need some. */
export const DEFAULT_GPU_HEADROOM: DeviceHeadroom = { minBytes: 1024 * MIB, fractionOfTotal: 0.02 };

export interface GpuTierOpenOptions {
  /** A loaded driver (cuInit is called here). */
  driver: CudaDriver;
  /** GPUs to use: the first min(numGpus, cuDeviceGetCount()) devices. */
  numGpus: number;
  /** Device memory to reserve on each GPU (--gpu-mem-gb in bytes). */
  perDeviceBudgetBytes: number;
  /** Bytes per host↔device copy, and per staging buffer (a multiple of 4096). */
  chunkBytes: number;
  /** Copy worker threads; 0 runs copies on the calling thread (tests; drivers without a workerSpec). */
  copyThreads?: number;
  /** Pinned staging buffers of chunkBytes: the bound on chunks in flight through the tier. */
  stagingSlots?: number;
  /** Chunks in flight per entry. */
  depth?: number;
  /** Device allocation size for the reservation; halves down to minSlabBytes when the driver runs short. */
  slabBytes?: number;
  minSlabBytes?: number;
  /** Device memory never reserved: each GPU's reservation stops at cuMemGetInfo free less this. */
  headroom?: DeviceHeadroom;
  /** Free device memory from process exit and signal hooks too (default true). */
  exitHook?: boolean;
  /** Where the NVIDIA driver version is read from (tests): the /proc banner, then nvidia-smi (null: not asked). */
  procVersionPath?: string;
  nvidiaSmi?: string | null;
}

export interface GpuDeviceReport {
  index: number;
  name: string;
  totalMemoryBytes: number;
  pciBusId: string | null;
  requestedBytes: number;
  reservedBytes: number;
  /** Free memory when the tier opened, and the most the reservation could take (free less the headroom). */
  freeBytesAtOpen: number | null;
  reservationCapBytes: number | null;
  /** Why less than requested was reserved (null when all of it was). */
  shortfall: string | null;
}

export interface GpuCopyDirectionStats {
  bytes: number;
  copies: number;
  /** Summed durations of the copies, each from its first cuMemcpy*Async call to stream completion. */
  copyNs: number;
  /**
   * Time with at least one of these copies executing: the union of the copies' own intervals, as the
   * copy threads timed them (waiting in a copy thread behind other copies is not in it).
   */
  busyNs: number;
  /** bytes / copyNs: what one copy achieves (copies in flight together share the link, each slower). */
  perCopyBytesPerSec: number | null;
  /** bytes / busyNs: what the link carried while these copies kept it busy (the figure to compare with torch). */
  linkBusyBytesPerSec: number | null;
  /** = perCopyBytesPerSec (its older name). */
  bandwidthBytesPerSec: number | null;
}

/** Staging slots taken by chunks in the window, and how long chunks waited for one (none free). */
export interface GpuStagingWaitStats {
  acquisitions: number;
  /** Acquisitions that found every slot taken and waited for a release. */
  waits: number;
  /** The waits' time, summed over chunks (chunks wait side by side: not wall-clock time). */
  waitNs: number;
  maxWaitNs: number;
}

export interface GpuTierReport {
  devices: GpuDeviceReport[];
  /** GPUs asked for (--num-gpus) and used (those present, up to that many). */
  requestedGpus: number;
  /** The NVIDIA driver's version (from /proc or nvidia-smi; null where neither says). */
  driverVersion: string | null;
  /** The CUDA version the driver supports (cuDriverGetVersion). */
  cudaVersion: string;
  driverLibrary: string;
  requestedBytes: number;
  /** Device memory held by the tier: its budget. */
  reservedBytes: number;
  /** Why the budget is smaller than asked (fewer GPUs, less memory); null when it is not. */
  shortfallReason: string | null;
  chunkBytes: number;
  slabBytes: number;
  stagingBytes: number;
  stagingPinned: boolean;
  stagingReason: string | null;
  /** Staging buffers of chunkBytes each: chunks in flight through the tier at once, at most. */
  stagingSlots: number;
  /** How chunks got their staging slot (counted over the window, as the copies). */
  stagingWait: GpuStagingWaitStats;
  copyThreads: number;
  /** Host→device copies (from pinned staging). */
  h2d: GpuCopyDirectionStats;
  /** Device→host copies into pinned staging (reads, and demotions to a buffer the copy workers cannot reach). */
  d2h: GpuCopyDirectionStats;
  /** Device→host copies straight into the tier below's buffer during demotions (copyChunkOut): pageable memory. */
  demotionD2h: GpuCopyDirectionStats;
}

/** The tier was asked to hold more than its free device memory: the cache should have demoted first. */
export class GpuTierFullError extends Error {
  readonly code = 'INSUFFICIENT_SPACE';
  constructor(message: string) {
    super(message);
    this.name = 'GpuTierFullError';
  }
}

interface StoredEntry {
  sizeBytes: number;
  extents: DeviceExtent[];
  /** Entry offset where each extent starts. */
  starts: number[];
}

export interface DirTotals {
  bytes: number;
  copies: number;
  copyNs: number;
  /** Time with at least one of these copies executing (copy-busy-union.ts). */
  busy: CopyBusyUnion;
}

type CopyKind = 'h2d' | 'd2h' | 'demotionD2h';

export function newTotals(): DirTotals {
  return { bytes: 0, copies: 0, copyNs: 0, busy: new CopyBusyUnion() };
}

/** A copy was handed to the copy engine at `nowNs`; the token goes to copyEnded. */
export function copyStarted(t: DirTotals, nowNs: bigint): number {
  return t.busy.handOff(nowNs);
}

/** The copy handed off as `token` ended: its own interval, or null when it failed (no bytes then). */
export function copyEnded(t: DirTotals, token: number, bytes: number, interval: CopyInterval | null): void {
  t.busy.settle(token, interval);
  if (bytes > 0 && interval !== null) {
    t.bytes += bytes;
    t.copies += 1;
    t.copyNs += Number(interval.endNs - interval.startNs);
  }
}

interface GpuTierParts {
  driver: CudaDriver;
  contexts: Map<number, CUcontext>;
  devices: GpuDeviceReport[];
  requestedGpus: number;
  driverVersion: string | null;
  cudaVersion: string;
  staging: PinnedStaging;
  copies: CopyEngine;
  arena: DeviceArena;
  chunkBytes: number;
  slabBytes: number;
  depth: number;
  requestedBytes: number;
  exitHook: boolean;
}

/**
 * GPU tier: entries live in device memory that the tier reserved from the NVIDIA driver when it
 * opened (DeviceArena). A write pulls each chunk from its source into a pinned staging buffer and
 * copies it host→device; a read copies device→host into staging and hands the chunk to the sink;
 * a demotion copies device→host straight into the tier below's buffer. Copies run in worker
 * threads and are timed to completion; see docs/gpu.md.
 */
export class GpuTier implements TierBackend {
  readonly name = 'gpu' as const;
  readonly #p: GpuTierParts;
  readonly #entries = new Map<string, StoredEntry>();
  readonly #totals: Record<CopyKind, DirTotals> = { h2d: newTotals(), d2h: newTotals(), demotionD2h: newTotals() };
  readonly #reservedBytes: number;
  #disposeExitHook: (() => void) | null = null;
  #closed = false;
  /** Whether copies are counted: from resetCopyStats (the window's open) to stopCopyStats (its close). */
  #counting = true;
  readonly #stagingWait: GpuStagingWaitStats = { acquisitions: 0, waits: 0, waitNs: 0, maxWaitNs: 0 };

  private constructor(p: GpuTierParts) {
    this.#p = p;
    this.#reservedBytes = p.arena.capacityBytes;
    if (p.exitHook) {
      // Synchronous: 'exit' listeners cannot wait for promises. The copy workers outlive this hook
      // by a moment: first no copy may start or still be running, then the memory goes.
      this.#disposeExitHook = onProcessExit(() => {
        p.copies.stopForExit(EXIT_COPY_DRAIN_MS);
        p.arena.releaseAll();
        p.staging.unregister();
      });
    }
  }

  /**
   * Opens the tier: initialises the driver, takes the GPUs' primary contexts, pins the staging
   * buffers, starts the copy workers and reserves device memory. Throws when no device memory at
   * all could be reserved, or on a driver error; everything taken so far is given back first.
   */
  static async open(o: GpuTierOpenOptions): Promise<GpuTier> {
    const { driver } = o;
    if (!Number.isSafeInteger(o.numGpus) || o.numGpus < 1) throw new RangeError(`numGpus must be a positive integer (got ${o.numGpus})`);
    if (!(o.perDeviceBudgetBytes > 0)) throw new RangeError(`perDeviceBudgetBytes must be positive (got ${o.perDeviceBudgetBytes})`);
    const copyThreads = driver.workerSpec === null ? 0 : (o.copyThreads ?? DEFAULT_GPU_COPY_THREADS);
    const stagingSlots = o.stagingSlots ?? Math.max(4, 4 * copyThreads);
    const depth = Math.max(1, Math.min(stagingSlots, o.depth ?? Math.max(2, 2 * copyThreads)));
    const slabBytes = o.slabBytes ?? Math.max(o.chunkBytes, DEFAULT_GPU_SLAB_BYTES);
    const minSlabBytes = Math.min(slabBytes, o.minSlabBytes ?? DEFAULT_GPU_MIN_SLAB_BYTES);
    const perDevice = Math.floor(o.perDeviceBudgetBytes);

    const driverVersion = await readNvidiaDriverVersion({ procPath: o.procVersionPath, nvidiaSmi: o.nvidiaSmi });
    driver.cuInit(0);
    const cudaVersion = formatCudaVersion(driver.cuDriverGetVersion());
    const count = driver.cuDeviceGetCount();
    if (count < 1) throw new Error('the NVIDIA driver reports no CUDA device');
    const used = Math.min(o.numGpus, count);
    const contexts = new Map<number, CUcontext>();
    const devices: GpuDeviceReport[] = [];
    let staging: PinnedStaging | null = null;
    let copies: CopyEngine | null = null;
    try {
      for (let i = 0; i < used; i++) {
        const dev = driver.cuDeviceGet(i);
        let pciBusId: string | null = null;
        try {
          pciBusId = driver.cuDeviceGetPCIBusId(dev);
        } catch {
          // optional detail
        }
        devices.push({
          index: i,
          name: driver.cuDeviceGetName(dev),
          totalMemoryBytes: driver.cuDeviceTotalMem(dev),
          pciBusId,
          requestedBytes: perDevice,
          reservedBytes: 0,
          freeBytesAtOpen: null,
          reservationCapBytes: null,
          shortfall: null,
        });
        contexts.set(i, driver.cuDevicePrimaryCtxRetain(dev));
      }
      driver.cuCtxSetCurrent(contexts.get(0)!);
      staging = PinnedStaging.create(driver, o.chunkBytes, stagingSlots);
      const ordinals = devices.map((d) => d.index);
      copies =
        copyThreads > 0
          ? await WorkerCopyEngine.start({ driver: driver.workerSpec!, devices: ordinals, threads: copyThreads })
          : new InlineCopyEngine(driver, ordinals);
      const arena = DeviceArena.reserve({
        driver,
        contexts,
        plan: ordinals.map((device) => ({ device, bytes: perDevice })),
        slabBytes,
        minSlabBytes,
        headroom: o.headroom ?? DEFAULT_GPU_HEADROOM,
      });
      for (const r of arena.reservations) {
        const d = devices[r.device];
        d.reservedBytes = r.reservedBytes;
        d.freeBytesAtOpen = r.freeBytesBefore;
        d.reservationCapBytes = r.capBytes;
        d.shortfall = r.shortfall;
      }
      if (arena.capacityBytes === 0) {
        arena.releaseAll();
        throw new Error(`no device memory could be reserved: ${devices.map((d) => `GPU ${d.index}: ${d.shortfall}`).join('; ')}`);
      }
      return new GpuTier({
        driver,
        contexts,
        devices,
        requestedGpus: o.numGpus,
        driverVersion,
        cudaVersion,
        staging,
        copies,
        arena,
        chunkBytes: o.chunkBytes,
        slabBytes,
        depth,
        requestedBytes: perDevice * o.numGpus,
        exitHook: o.exitHook ?? true,
      });
    } catch (err) {
      await copies?.close().catch(() => undefined);
      staging?.unregister();
      releaseContexts(driver, contexts);
      throw err;
    }
  }

  /** Device memory the tier holds for entries: give the cache this as the tier's budget. */
  get budgetBytes(): number {
    return this.#reservedBytes;
  }

  /** Bytes of device memory entries occupy now. */
  get usedBytes(): number {
    return this.#p.arena.usedBytes;
  }

  /** Device memory still held from the driver (0 after close). */
  get heldDeviceBytes(): number {
    return this.#p.arena.heldBytes;
  }

  get entryCount(): number {
    return this.#entries.size;
  }

  report(): GpuTierReport {
    const p = this.#p;
    const reasons: string[] = [];
    if (p.devices.length < p.requestedGpus) {
      reasons.push(`--num-gpus ${p.requestedGpus} asked for ${p.requestedGpus} GPUs, the driver reports ${p.devices.length}`);
    }
    for (const d of p.devices) {
      if (d.shortfall) reasons.push(`GPU ${d.index} (${d.name}): reserved ${d.reservedBytes} of ${d.requestedBytes} bytes (${d.shortfall})`);
    }
    return {
      devices: p.devices.map((d) => ({ ...d })),
      requestedGpus: p.requestedGpus,
      driverVersion: p.driverVersion,
      cudaVersion: p.cudaVersion,
      driverLibrary: p.driver.libraryPath,
      requestedBytes: p.requestedBytes,
      reservedBytes: this.#reservedBytes,
      shortfallReason: reasons.length > 0 ? reasons.join('; ') : null,
      chunkBytes: p.chunkBytes,
      slabBytes: p.slabBytes,
      stagingBytes: p.staging.totalBytes,
      stagingPinned: p.staging.pinned,
      stagingReason: p.staging.pinnedReason,
      stagingSlots: p.staging.slotCount,
      stagingWait: { ...this.#stagingWait },
      copyThreads: p.copies.threads,
      h2d: dirStats(this.#totals.h2d),
      d2h: dirStats(this.#totals.d2h),
      demotionD2h: dirStats(this.#totals.demotionD2h),
    };
  }

  /** Starts the copy counters afresh (at the start of the measured phase, as the cache's statistics). */
  resetCopyStats(): void {
    const now = process.hrtime.bigint();
    for (const t of Object.values(this.#totals)) {
      t.bytes = 0;
      t.copies = 0;
      t.copyNs = 0;
      // Copies in flight across the reset count from now on.
      t.busy.reset(now);
    }
    Object.assign(this.#stagingWait, { acquisitions: 0, waits: 0, waitNs: 0, maxWaitNs: 0 });
    this.#counting = true;
  }

  /**
   * Freezes the copy counters (when the measured window closes, with the cache's counters): a copy
   * that completes from now on counts neither its bytes nor its time. Call it in the same step as
   * the cache's closeWindow: each copy is counted in the step that tells the cache its chunk moved,
   * so the copy totals and the tier's bytes count exactly the same chunks.
   */
  stopCopyStats(): void {
    this.#counting = false;
  }

  /**
   * Timed from the call to the last chunk's copy: `deviceNs` is the time with at least one of the
   * entry's own copies executing (the union of their intervals, as the copy workers timed them); the
   * rest is host-side: waiting for a staging slot, the source filling it (payload generation, or a
   * copy from the tier below), and the copies waiting in a copy worker behind other entries' copies.
   */
  async write(entry: EntryRef, source: ChunkSource, progress?: ChunkProgress): Promise<OpTiming> {
    this.#assertOpen();
    if (this.#entries.has(entry.key)) throw new Error(`GPU tier already holds ${entry.key}`);
    const startNs = process.hrtime.bigint();
    const own = new CopyBusyUnion();
    const extents = this.#p.arena.allocate(entry.sizeBytes);
    if (extents === null) {
      throw new GpuTierFullError(
        `GPU tier has no room for ${entry.key} (${entry.sizeBytes} bytes): ${this.#p.arena.freeBytes} of ${this.#reservedBytes} reserved bytes are free`,
      );
    }
    const stored = storedEntry(entry.sizeBytes, extents);
    try {
      await this.#forEachChunk(entry.sizeBytes, async (index, offset, length) => {
        const slot = await this.#acquireSlot();
        try {
          const view = slot.buffer.subarray(0, length);
          await source({ index, entryOffsetBytes: offset, buffer: view });
          await this.#copy('htod', 'h2d', view, segmentsOf(stored, offset, length), progress, own);
        } finally {
          this.#p.staging.release(slot);
        }
      });
    } catch (err) {
      this.#p.arena.release(extents);
      throw err;
    }
    this.#entries.set(entry.key, stored);
    const endNs = process.hrtime.bigint();
    return { startNs, endNs, durationNs: Number(endNs - startNs), bytes: entry.sizeBytes, deviceNs: own.busyNs() };
  }

  /** Timed and split as `write`; the host side here includes the sink's work on each chunk. */
  async read(entry: EntryRef, sink?: ChunkSink, progress?: ChunkProgress): Promise<OpTiming> {
    this.#assertOpen();
    const stored = this.#get(entry);
    const startNs = process.hrtime.bigint();
    const own = new CopyBusyUnion();
    await this.#forEachChunk(stored.sizeBytes, async (index, offset, length) => {
      const slot = await this.#acquireSlot();
      try {
        const view = slot.buffer.subarray(0, length);
        await this.#copy('dtoh', 'd2h', view, segmentsOf(stored, offset, length), progress, own);
        if (sink) await sink({ index, entryOffsetBytes: offset, buffer: view });
      } finally {
        this.#p.staging.release(slot);
      }
    });
    const endNs = process.hrtime.bigint();
    return { startNs, endNs, durationNs: Number(endNs - startNs), bytes: entry.sizeBytes, deviceNs: own.busyNs() };
  }

  /**
   * Copies bytes [chunk.entryOffsetBytes, + chunk.buffer.length) of the entry device→host into
   * chunk.buffer (the tier below's own buffer, during a demotion), whatever that tier's chunking.
   */
  async copyChunkOut(entry: EntryRef, chunk: ChunkView, progress?: ChunkProgress): Promise<void> {
    this.#assertOpen();
    const stored = this.#get(entry);
    const offset = chunk.entryOffsetBytes;
    const length = chunk.buffer.length;
    if (offset < 0 || length <= 0 || offset + length > stored.sizeBytes) {
      throw new RangeError(`chunk [${offset}, +${length}) lies outside ${entry.key} (${stored.sizeBytes} bytes)`);
    }
    if (!this.#p.copies.needsSharedHost || isSharedView(chunk.buffer)) {
      await this.#copy('dtoh', 'demotionD2h', chunk.buffer, segmentsOf(stored, offset, length), progress);
      return;
    }
    // A buffer the copy workers cannot reach: through staging, a slot at a time, each copy told to
    // `progress` as it is counted (in #copy's one step), so a window closing between two copies
    // finds the cache and the tier's copies agreeing.
    const slot: StagingSlot = await this.#acquireSlot();
    try {
      for (let done = 0; done < length; ) {
        const n = Math.min(slot.buffer.length, length - done);
        const view = slot.buffer.subarray(0, n);
        await this.#copy('dtoh', 'd2h', view, segmentsOf(stored, offset + done, n), progress);
        chunk.buffer.set(view, done);
        done += n;
      }
    } finally {
      this.#p.staging.release(slot);
    }
  }

  async remove(entry: EntryRef): Promise<void> {
    const stored = this.#entries.get(entry.key);
    if (!stored) return;
    this.#entries.delete(entry.key);
    this.#p.arena.release(stored.extents);
  }

  /**
   * Stops the copy workers (each finishes its copy in flight and releases its contexts), gives the
   * device memory back (cuMemFree), unpins the staging memory and releases the primary contexts.
   * Idempotent. Throws the first driver error after attempting every step.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const p = this.#p;
    const errors: Error[] = [];
    await p.copies.close().catch((err: Error) => errors.push(err));
    const arenaError = p.arena.releaseAll();
    if (arenaError) errors.push(arenaError);
    const stagingError = p.staging.unregister();
    if (stagingError) errors.push(stagingError);
    const ctxError = releaseContexts(p.driver, p.contexts);
    if (ctxError) errors.push(ctxError);
    this.#disposeExitHook?.();
    this.#disposeExitHook = null;
    this.#entries.clear();
    if (errors.length > 0) throw new Error(`GPU tier close: ${errors.map((e) => e.message).join('; ')}`);
  }

  #assertOpen(): void {
    if (this.#closed) throw new Error('the GPU tier is closed');
  }

  #get(entry: EntryRef): StoredEntry {
    const stored = this.#entries.get(entry.key);
    if (!stored) throw new Error(`GPU tier has no entry ${entry.key}`);
    return stored;
  }

  /**
   * Runs one copy and counts it, then tells `progress` its bytes, in one step: the cache counts the
   * chunk there, so a window that opens or closes between copies finds the copy counted on both
   * sides or on neither. A copy that straddles the window's close counts as the cache counts
   * chunks: whole if it completed (its reply arrived) before the close, not at all after it.
   */
  async #copy(
    direction: CopyDirection,
    kind: CopyKind,
    host: Uint8Array,
    segments: CopySegment[],
    progress?: ChunkProgress,
    /** The operation's own copies (its device time), whatever the window. */
    own?: CopyBusyUnion,
  ): Promise<void> {
    const t = this.#totals[kind];
    const nowNs = process.hrtime.bigint();
    const token = copyStarted(t, nowNs);
    const ownToken = own?.handOff(nowNs);
    let interval: CopyInterval | null = null;
    try {
      interval = await this.#p.copies.copy(direction, host, segments);
    } finally {
      const counted = this.#counting ? interval : null;
      copyEnded(t, token, counted === null ? 0 : host.byteLength, counted);
      if (ownToken !== undefined) own!.settle(ownToken, interval);
    }
    progress?.(host.byteLength);
  }

  /** A staging slot, counting (in the window) whether the chunk had to wait for one, and how long. */
  async #acquireSlot(): Promise<StagingSlot> {
    const staging = this.#p.staging;
    if (!staging.wouldWait) {
      const slot = await staging.acquire();
      if (this.#counting) this.#stagingWait.acquisitions++;
      return slot;
    }
    const fromNs = process.hrtime.bigint();
    const slot = await staging.acquire();
    if (this.#counting) {
      const waitedNs = Number(process.hrtime.bigint() - fromNs);
      const w = this.#stagingWait;
      w.acquisitions++;
      w.waits++;
      w.waitNs += waitedNs;
      if (waitedNs > w.maxWaitNs) w.maxWaitNs = waitedNs;
    }
    return slot;
  }

  /**
   * Runs `fn` over the entry's chunks with up to `depth` in flight. After a failure no new chunk
   * starts, and the error is thrown only once every started chunk has settled: no copy may still
   * be writing into device memory the caller is about to give back.
   */
  async #forEachChunk(sizeBytes: number, fn: (index: number, offset: number, length: number) => Promise<void>): Promise<void> {
    const chunkBytes = this.#p.chunkBytes;
    const count = Math.ceil(sizeBytes / chunkBytes);
    let next = 0;
    let failure: { err: unknown } | null = null;
    const lane = async (): Promise<void> => {
      while (next < count && failure === null) {
        const index = next++;
        const offset = index * chunkBytes;
        try {
          await fn(index, offset, Math.min(chunkBytes, sizeBytes - offset));
        } catch (err) {
          failure ??= { err };
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.#p.depth, count) }, lane));
    if (failure !== null) throw (failure as { err: unknown }).err;
  }
}

function storedEntry(sizeBytes: number, extents: DeviceExtent[]): StoredEntry {
  const starts: number[] = [];
  let at = 0;
  for (const e of extents) {
    starts.push(at);
    at += e.bytes;
  }
  return { sizeBytes, extents, starts };
}

/** The device ranges holding entry bytes [offset, offset + length), with their offsets in a host buffer holding that range. */
function segmentsOf(stored: StoredEntry, offset: number, length: number): CopySegment[] {
  const { extents, starts } = stored;
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid] <= offset) lo = mid;
    else hi = mid - 1;
  }
  const out: CopySegment[] = [];
  let at = offset;
  const end = offset + length;
  for (let i = lo; at < end && i < extents.length; i++) {
    const e = extents[i];
    const inExtent = at - starts[i];
    const n = Math.min(e.bytes - inExtent, end - at);
    out.push({ device: e.device, dptr: e.ptr + inExtent, hostOffset: at - offset, bytes: n });
    at += n;
  }
  if (at !== end) throw new Error(`entry range [${offset}, ${end}) is not covered by its extents`);
  return out;
}

export function dirStats(t: DirTotals): GpuCopyDirectionStats {
  const perCopy = t.copyNs > 0 ? (t.bytes / t.copyNs) * 1e9 : null;
  const busyNs = t.busy.busyNs();
  return {
    bytes: t.bytes,
    copies: t.copies,
    copyNs: t.copyNs,
    busyNs,
    perCopyBytesPerSec: perCopy,
    linkBusyBytesPerSec: busyNs > 0 ? (t.bytes / busyNs) * 1e9 : null,
    bandwidthBytesPerSec: perCopy,
  };
}

function releaseContexts(driver: CudaDriver, contexts: Map<number, CUcontext>): Error | null {
  let first: Error | null = null;
  for (const ordinal of contexts.keys()) {
    try {
      driver.cuDevicePrimaryCtxRelease(driver.cuDeviceGet(ordinal));
    } catch (err) {
      first ??= err as Error;
    }
  }
  contexts.clear();
  try {
    driver.cuCtxSetCurrent(null);
  } catch {
    // nothing current to clear
  }
  return first;
}
