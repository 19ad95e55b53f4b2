// One file per KV entry, streamed through the slab's aligned buffers in chunks, so memory stays a
// small constant whatever the entry size (entries reach 2 GiB and more). Timing follows the engine
// notes: an entry's latency runs from its first chunk's submission to its last chunk's completion,
// open and close included; filling the first buffer happens before the clock starts, because
// producing bytes is not the storage being measured.
//
// I/O goes through fs.promises, i.e. libuv's thread pool: UV_THREADPOOL_SIZE, set in the engine
// process's environment before start, bounds the I/Os actually in flight.

import { createHash } from 'node:crypto';
import { constants as fsConstants, promises as fsp } from 'node:fs';
import path from 'node:path';
import type { ChunkProgress } from '../tiers/tier-backend.ts';
import type { AlignedSlab, Slot } from './aligned-slab.ts';
import type { BytePool } from './byte-workers.ts';
import { DIRECT_IO_ALIGNMENT_BYTES, probeDirectIo, type DirectIoProbe } from './direct-io.ts';

export const DEFAULT_CHUNK_BYTES = 16 * 1024 * 1024;
// Leaves room under NAME_MAX (255) for the hash suffix and extension.
const MAX_SANITISED_KEY_CHARS = 180;

export interface IoTiming {
  startNs: bigint;
  endNs: bigint;
  durationNs: number;
  /** True payload bytes of the entry (without direct-I/O tail padding). */
  bytes: number;
  /** Part of durationNs with at least one of this entry's I/Os (or its fdatasync) in flight. */
  deviceNs: number;
}

export interface ChunkView {
  index: number;
  entryOffsetBytes: number;
  /** Exactly the entry's bytes [entryOffsetBytes, entryOffsetBytes + buffer.length): a view into a slab slot. */
  buffer: Buffer;
}

/** Fills `chunk.buffer`. Must not acquire slots from the same slab (it could wait on itself). */
export type ChunkSource = (chunk: ChunkView) => Promise<void>;
/** A ChunkSource that produces entry `payloadKeyHash`'s payload (BytePool.payloadSource). */
export type PayloadChunkSource = ChunkSource & { readonly payloadKeyHash: bigint };

function payloadKeyHashOf(source: ChunkSource): bigint | null {
  const hash = (source as Partial<PayloadChunkSource>).payloadKeyHash;
  return typeof hash === 'bigint' ? hash : null;
}

/** Consumes a chunk that was read; the slot is reused once the returned promise settles. */
export type ChunkSink = (chunk: ChunkView) => Promise<void>;

export interface EntryFileStoreOptions {
  /** Exists, is empty and belongs to this run: the caller creates it. */
  dir: string;
  directIo: 'auto' | 'on' | 'off';
  chunkBytes?: number;
  perEntryDepth: number;
  slab: AlignedSlab;
  bytes: BytePool;
  fsync: 'per-entry' | 'none';
  /** A probe of `dir` already made (a preflight check, say), used instead of probing again. */
  directIoProbe?: DirectIoProbe;
}

export class EntryFileStoreError extends Error {
  readonly code: 'DIRECT_IO_UNSUPPORTED' | 'ENTRY_TRUNCATED' | 'PAYLOAD_MISMATCH' | 'VALIDATION';
  constructor(code: EntryFileStoreError['code'], message: string) {
    super(message);
    this.name = 'EntryFileStoreError';
    this.code = code;
  }
}

/** Raised by reads and writes stopped by `cancelInFlight` (the measured window has closed). */
export class IoCancelledError extends Error {
  constructor(what: string) {
    super(`${what}: cancelled, the measured window has closed`);
    this.name = 'IoCancelledError';
  }
}

/** Raised by `verifyingSink` with the details of the first mismatch. */
export class PayloadMismatchError extends EntryFileStoreError {
  readonly offsetBytes: number;
  readonly expectedKeyHash: bigint | undefined;
  readonly foundKeyHash: bigint | undefined;
  constructor(key: string, offsetBytes: number, expectedKeyHash: bigint | undefined, foundKeyHash: bigint | undefined) {
    const misplaced =
      expectedKeyHash !== undefined && foundKeyHash !== undefined && expectedKeyHash !== foundKeyHash
        ? ` (the block holds another entry's data: key hash 0x${foundKeyHash.toString(16)})`
        : '';
    super('PAYLOAD_MISMATCH', `entry ${key}: read data differs from the payload at byte ${offsetBytes}${misplaced}`);
    this.name = 'PayloadMismatchError';
    this.offsetBytes = offsetBytes;
    this.expectedKeyHash = expectedKeyHash;
    this.foundKeyHash = foundKeyHash;
  }
}

/** `<key with characters outside [A-Za-z0-9._-] replaced by _>.kv`; long keys are shortened with a hash suffix. */
export function entryFileName(key: string): string {
  const sanitised = key.replace(/[^A-Za-z0-9._-]/g, '_');
  if (sanitised.length <= MAX_SANITISED_KEY_CHARS) return `${sanitised}.kv`;
  const digest = createHash('sha256').update(key).digest('hex').slice(0, 16);
  return `${sanitised.slice(0, MAX_SANITISED_KEY_CHARS - 17)}~${digest}.kv`;
}

function roundUp(n: number, multiple: number): number {
  return Math.ceil(n / multiple) * multiple;
}

function now(): bigint {
  return process.hrtime.bigint();
}

/**
 * Accumulates the time during which at least one I/O is in flight: an entry's "device" time, as
 * opposed to the time spent producing bytes, waiting for a buffer, or opening and closing.
 */
class InFlightClock {
  private inFlight = 0;
  private busySinceNs = 0n;
  totalNs = 0;

  async time<T>(io: Promise<T>): Promise<T> {
    if (this.inFlight++ === 0) this.busySinceNs = now();
    try {
      return await io;
    } finally {
      if (--this.inFlight === 0) this.totalNs += Number(now() - this.busySinceNs);
    }
  }
}

/** Wakes every waiter on each state change; callers re-check their own condition. */
class Signal {
  private waiting: Array<() => void> = [];
  wait(): Promise<void> {
    return new Promise<void>((resolve) => this.waiting.push(resolve));
  }
  notify(): void {
    const waiting = this.waiting;
    this.waiting = [];
    for (const resolve of waiting) resolve();
  }
}

async function writeFully(fh: fsp.FileHandle, buffer: Buffer, lengthBytes: number, positionBytes: number): Promise<void> {
  let doneBytes = 0;
  while (doneBytes < lengthBytes) {
    const { bytesWritten } = await fh.write(buffer, doneBytes, lengthBytes - doneBytes, positionBytes + doneBytes);
    if (bytesWritten <= 0) throw new Error(`write made no progress at byte ${positionBytes + doneBytes}`);
    doneBytes += bytesWritten;
  }
}

/** Reads until `wantBytes` or end of file; fails if fewer than `needBytes` arrived. */
async function readFully(
  fh: fsp.FileHandle,
  buffer: Buffer,
  wantBytes: number,
  needBytes: number,
  positionBytes: number,
  filePath: string,
): Promise<void> {
  let doneBytes = 0;
  while (doneBytes < wantBytes) {
    const { bytesRead } = await fh.read(buffer, doneBytes, wantBytes - doneBytes, positionBytes + doneBytes);
    if (bytesRead <= 0) break;
    doneBytes += bytesRead;
  }
  if (doneBytes < needBytes) {
    throw new EntryFileStoreError(
      'ENTRY_TRUNCATED',
      `${filePath} ends at byte ${positionBytes + doneBytes}, before the ${needBytes} bytes expected at ${positionBytes}`,
    );
  }
}

export class EntryFileStore {
  readonly dir: string;
  readonly directIo: { enabled: boolean; reason: string | null };
  readonly chunkBytes: number;
  readonly perEntryDepth: number;
  readonly fsync: 'per-entry' | 'none';
  readonly bytes: BytePool;
  private readonly slab: AlignedSlab;
  /**
   * Unlinks in progress, by file name. The cache forgets an evicted entry before its file is gone,
   * so the same key can be written again meanwhile: that write waits, or the unlink would remove
   * the new file (and a later read of the entry fail with ENOENT).
   */
  readonly #deleting = new Map<string, Promise<void>>();
  /** Set by `cancelInFlight`: no further chunk is submitted. */
  #cancelled = false;
  /** Payload chunks written by restamping a slot that held the pool, and by a full fill. */
  readonly payloadChunks = { restamped: 0, filled: 0 };
  /** Files this store created and has not removed; the only ones it will ever delete. */
  private readonly ownNames = new Set<string>();

  private constructor(opts: EntryFileStoreOptions, chunkBytes: number, directIo: { enabled: boolean; reason: string | null }) {
    this.dir = path.resolve(opts.dir);
    this.directIo = directIo;
    this.chunkBytes = chunkBytes;
    this.perEntryDepth = opts.perEntryDepth;
    this.fsync = opts.fsync;
    this.bytes = opts.bytes;
    this.slab = opts.slab;
  }

  static async open(opts: EntryFileStoreOptions): Promise<EntryFileStore> {
    const chunkBytes = opts.chunkBytes ?? DEFAULT_CHUNK_BYTES;
    if (!Number.isSafeInteger(chunkBytes) || chunkBytes <= 0 || chunkBytes % DIRECT_IO_ALIGNMENT_BYTES !== 0) {
      throw new EntryFileStoreError('VALIDATION', `chunkBytes must be a positive multiple of ${DIRECT_IO_ALIGNMENT_BYTES} (got ${chunkBytes})`);
    }
    if (chunkBytes > opts.slab.slotBytes) {
      throw new EntryFileStoreError('VALIDATION', `chunkBytes ${chunkBytes} exceeds the slab's slot size ${opts.slab.slotBytes}`);
    }
    if (!Number.isSafeInteger(opts.perEntryDepth) || opts.perEntryDepth < 1) {
      throw new EntryFileStoreError('VALIDATION', `perEntryDepth must be a positive integer (got ${opts.perEntryDepth})`);
    }
    const stats = await fsp.stat(opts.dir);
    if (!stats.isDirectory()) throw new EntryFileStoreError('VALIDATION', `${opts.dir} is not a directory`);

    let directIo: { enabled: boolean; reason: string | null };
    if (opts.directIo === 'off') {
      directIo = { enabled: false, reason: "direct I/O turned off by configuration (directIo: 'off')" };
    } else {
      const probe = opts.directIoProbe ?? (await probeDirectIo(opts.dir));
      if (probe.supported && probe.logicalBlockBytes <= DIRECT_IO_ALIGNMENT_BYTES) {
        directIo = { enabled: true, reason: null };
      } else {
        const reason = probe.reason ?? `logical block size ${probe.logicalBlockBytes} exceeds ${DIRECT_IO_ALIGNMENT_BYTES} bytes`;
        if (opts.directIo === 'on') {
          throw new EntryFileStoreError('DIRECT_IO_UNSUPPORTED', `direct I/O was required but ${opts.dir} does not support it: ${reason}`);
        }
        directIo = { enabled: false, reason };
      }
    }
    return new EntryFileStore(opts, chunkBytes, directIo);
  }

  /** Where `key`'s file lives; always directly inside `dir`. */
  pathFor(key: string): string {
    return path.join(this.dir, entryFileName(key));
  }

  /**
   * Writes entry `key` of `sizeBytes`, asking `source` for each chunk's bytes. Overwrites an entry
   * this store wrote before; refuses to overwrite a file it did not create. On failure the partial
   * file is removed and the original error (with its `code`, e.g. ENOSPC) is rethrown.
   */
  async write(key: string, sizeBytes: number, source: ChunkSource, opts?: { progress?: ChunkProgress }): Promise<IoTiming> {
    const progress = opts?.progress;
    this.checkSize(sizeBytes);
    const name = entryFileName(key);
    const filePath = path.join(this.dir, name);
    await this.#deleting.get(name)?.catch(() => undefined);
    const chunkCount = Math.ceil(sizeBytes / this.chunkBytes);
    const depth = this.perEntryDepth;
    const direct = this.directIo.enabled;
    // With a pool exactly one chunk long, every whole chunk of every entry is the pool plus stamps:
    // a slot that holds the pool becomes this chunk by restamping, without copying 16 MiB.
    const payloadKeyHash = this.bytes.payloadPoolBytes === this.chunkBytes ? payloadKeyHashOf(source) : null;
    const flags =
      fsConstants.O_WRONLY |
      fsConstants.O_CREAT |
      // O_EXCL for new names so a file someone else put in the directory is never clobbered.
      (this.ownNames.has(name) ? fsConstants.O_TRUNC : fsConstants.O_EXCL) |
      (direct ? fsConstants.O_DIRECT : 0);

    const changed = new Signal();
    const inflight = new Set<Promise<void>>();
    const device = new InFlightClock();
    let failure: { error: unknown } | null = null;
    let fh: fsp.FileHandle | undefined;
    let opened = false;
    let fillingSlot: Slot | undefined;
    let startNs = 0n;

    const openFile = async (): Promise<fsp.FileHandle> => {
      startNs = now();
      const handle = await fsp.open(filePath, flags, 0o644);
      opened = true;
      this.ownNames.add(name);
      return handle;
    };

    try {
      for (let index = 0; index < chunkCount && failure === null; index++) {
        while (inflight.size >= depth && failure === null) await changed.wait();
        if (this.#cancelled) failure ??= { error: new IoCancelledError(`write of ${key}`) };
        if (failure !== null) break;
        fillingSlot = await this.slab.acquire(payloadKeyHash !== null ? 'payload' : 'other');
        const entryOffsetBytes = index * this.chunkBytes;
        const lengthBytes = Math.min(this.chunkBytes, sizeBytes - entryOffsetBytes);
        const buffer = fillingSlot.buffer.subarray(0, lengthBytes);
        if (payloadKeyHash !== null && fillingSlot.holdsPayload) {
          // A failed restamp leaves the slot's pool bytes alone (it writes only stamp positions),
          // so the slot still holds the payload whatever happens here.
          await this.bytes.restamp(buffer, payloadKeyHash, entryOffsetBytes);
          this.payloadChunks.restamped++;
        } else {
          fillingSlot.holdsPayload = false;
          await source({ index, entryOffsetBytes, buffer });
          if (payloadKeyHash !== null) {
            this.payloadChunks.filled++;
            if (lengthBytes === this.chunkBytes) fillingSlot.holdsPayload = true;
          }
        }
        // An earlier chunk may have failed, or the window closed, while this one waited for a slot
        // or for its bytes (a worker's fill or restamp): either way it is not submitted.
        if (this.#cancelled) failure ??= { error: new IoCancelledError(`write of ${key}`) };
        if (failure !== null) break;
        let ioBytes = lengthBytes;
        if (direct) {
          // O_DIRECT lengths must be block multiples; zeroed padding keeps the file deterministic.
          ioBytes = roundUp(lengthBytes, DIRECT_IO_ALIGNMENT_BYTES);
          fillingSlot.buffer.fill(0, lengthBytes, ioBytes);
        }
        const paddedBytes = ioBytes - lengthBytes;
        if (fh === undefined) fh = await openFile();
        const slot = fillingSlot;
        fillingSlot = undefined;
        const done: Promise<void> = device
          .time(writeFully(fh, slot.buffer, ioBytes, entryOffsetBytes))
          .then(() => progress?.(lengthBytes))
          .catch((error: unknown) => {
            failure ??= { error };
          })
          .finally(() => {
            // Only now is the kernel done with the buffer, so only now may it be reused, with
            // the pool's bytes back where the padding zeroed them.
            if (paddedBytes > 0 && slot.holdsPayload) this.bytes.restorePool(slot.buffer.subarray(lengthBytes, ioBytes), lengthBytes);
            this.slab.release(slot);
            inflight.delete(done);
            changed.notify();
          });
        inflight.add(done);
      }
      if (failure === null && fh === undefined) fh = await openFile();
      await Promise.all(inflight);
      if (failure !== null) throw (failure as { error: unknown }).error;
      const handle = fh as fsp.FileHandle;
      // Durability per entry is what 'per-entry' promises; with O_DIRECT it still flushes the
      // allocation metadata and any volatile drive cache. The flush is an I/O in flight like a
      // chunk, so it holds one of the slab's --io-depth slots (its bytes untouched) while it runs.
      if (this.fsync === 'per-entry') {
        const flushSlot = await this.slab.acquire('other');
        try {
          await device.time(handle.datasync());
        } finally {
          this.slab.release(flushSlot);
        }
      }
      fh = undefined;
      await handle.close();
      const endNs = now();
      return { startNs, endNs, durationNs: Number(endNs - startNs), bytes: sizeBytes, deviceNs: device.totalNs };
    } catch (error) {
      failure ??= { error };
      if (fillingSlot !== undefined) this.slab.release(fillingSlot);
      await Promise.all(inflight);
      if (fh !== undefined) await fh.close().catch(() => undefined);
      if (opened) {
        await fsp.unlink(filePath).catch(() => undefined);
        this.ownNames.delete(name);
      }
      throw error;
    }
  }

  /**
   * Reads entry `key` (the caller passes its true size, as padding may follow it on disk). Chunks
   * go to `sink` in index order. The timing ends when the last chunk's read completes and the file
   * is closed; the returned promise also waits for the sinks.
   */
  async read(key: string, sizeBytes: number, opts?: { sink?: ChunkSink; progress?: ChunkProgress }): Promise<IoTiming> {
    this.checkSize(sizeBytes);
    const filePath = this.pathFor(key);
    const sink = opts?.sink;
    const progress = opts?.progress;
    const chunkCount = Math.ceil(sizeBytes / this.chunkBytes);
    const depth = this.perEntryDepth;
    const direct = this.directIo.enabled;
    const flags = fsConstants.O_RDONLY | (direct ? fsConstants.O_DIRECT : 0);

    const changed = new Signal();
    const device = new InFlightClock();
    const reads: Array<Promise<void>> = [];
    let readsInFlight = 0;
    // A slot stays held from its read's submission until its sink is done; one more than the
    // depth lets the next read start while a sink runs.
    let slotsHeld = 0;
    let failure: { error: unknown } | null = null;
    let sinkChain: Promise<void> = Promise.resolve();
    let fh: fsp.FileHandle | undefined;
    let acquiredSlot: Slot | undefined;
    let startNs = 0n;
    let endNs = 0n;

    try {
      for (let index = 0; index < chunkCount && failure === null; index++) {
        while ((readsInFlight >= depth || slotsHeld >= depth + 1) && failure === null) await changed.wait();
        if (this.#cancelled) failure ??= { error: new IoCancelledError(`read of ${key}`) };
        if (failure !== null) break;
        acquiredSlot = await this.slab.acquire('other');
        acquiredSlot.holdsPayload = false;
        if (fh === undefined) {
          startNs = now();
          fh = await fsp.open(filePath, flags);
        }
        const slot = acquiredSlot;
        acquiredSlot = undefined;
        slotsHeld++;
        readsInFlight++;
        const entryOffsetBytes = index * this.chunkBytes;
        const lengthBytes = Math.min(this.chunkBytes, sizeBytes - entryOffsetBytes);
        const ioBytes = direct ? roundUp(lengthBytes, DIRECT_IO_ALIGNMENT_BYTES) : lengthBytes;
        const readDone = device
          .time(readFully(fh, slot.buffer, ioBytes, lengthBytes, entryOffsetBytes, filePath))
          .then(() => progress?.(lengthBytes))
          .finally(() => {
            readsInFlight--;
            changed.notify();
          });
        const settled = readDone.catch((error: unknown) => {
          failure ??= { error };
        });
        reads.push(settled);
        sinkChain = sinkChain.then(async () => {
          try {
            await readDone;
            if (sink !== undefined && failure === null) {
              await sink({ index, entryOffsetBytes, buffer: slot.buffer.subarray(0, lengthBytes) });
            }
          } catch (error) {
            failure ??= { error };
          } finally {
            this.slab.release(slot);
            slotsHeld--;
            changed.notify();
          }
        });
      }
      if (failure === null && fh === undefined) {
        startNs = now();
        fh = await fsp.open(filePath, flags);
      }
      await Promise.all(reads);
      const handle = fh;
      fh = undefined;
      if (handle !== undefined) await handle.close();
      endNs = now();
      await sinkChain;
      if (failure !== null) throw (failure as { error: unknown }).error;
      return { startNs, endNs, durationNs: Number(endNs - startNs), bytes: sizeBytes, deviceNs: device.totalNs };
    } catch (error) {
      failure ??= { error };
      if (acquiredSlot !== undefined) this.slab.release(acquiredSlot);
      await Promise.all(reads);
      await sinkChain;
      if (fh !== undefined) await fh.close().catch(() => undefined);
      throw error;
    }
  }

  /**
   * Reads one chunk of entry `key` into `dest` (any buffer: the bytes go through an aligned slot).
   * Used to move an entry out of storage chunk by chunk (promotion to a faster tier).
   */
  async readChunkInto(key: string, sizeBytes: number, index: number, dest: Buffer): Promise<void> {
    this.checkSize(sizeBytes);
    const entryOffsetBytes = index * this.chunkBytes;
    const lengthBytes = Math.min(this.chunkBytes, sizeBytes - entryOffsetBytes);
    if (lengthBytes <= 0 || dest.length !== lengthBytes) {
      throw new EntryFileStoreError('VALIDATION', `chunk ${index} of ${key} has ${Math.max(0, lengthBytes)} bytes, the destination ${dest.length}`);
    }
    const direct = this.directIo.enabled;
    const filePath = this.pathFor(key);
    const slot = await this.slab.acquire('other');
    slot.holdsPayload = false;
    try {
      const fh = await fsp.open(filePath, fsConstants.O_RDONLY | (direct ? fsConstants.O_DIRECT : 0));
      try {
        const ioBytes = direct ? roundUp(lengthBytes, DIRECT_IO_ALIGNMENT_BYTES) : lengthBytes;
        await readFully(fh, slot.buffer, ioBytes, lengthBytes, entryOffsetBytes, filePath);
      } finally {
        await fh.close();
      }
      slot.buffer.copy(dest, 0, 0, lengthBytes);
    } finally {
      this.slab.release(slot);
    }
  }

  /**
   * Stops submitting chunks: reads and writes in progress end with IoCancelledError once their
   * chunks in flight complete (a cancelled write's partial file is removed). Used when the measured
   * window closes, so the drain takes milliseconds rather than the rest of every entry in flight.
   */
  cancelInFlight(): void {
    this.#cancelled = true;
  }

  /** Removes `key`'s file if this store created it; a key it never wrote is left alone. */
  async delete(key: string): Promise<void> {
    const name = entryFileName(key);
    if (!this.ownNames.has(name)) return;
    const unlinked = fsp
      .unlink(path.join(this.dir, name))
      .catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') throw err;
      })
      .then(() => void this.ownNames.delete(name))
      .finally(() => this.#deleting.delete(name));
    this.#deleting.set(name, unlinked);
    await unlinked;
  }

  /**
   * Removes every file this store created, then `dir` if nothing else is left in it. Call when no
   * I/O is in flight. One file that cannot be removed (EIO, a read-only remount) does not keep the
   * others: every one is tried, and the first error is thrown after.
   */
  async removeAll(): Promise<void> {
    let firstError: NodeJS.ErrnoException | null = null;
    for (const name of [...this.ownNames]) {
      try {
        await fsp.unlink(path.join(this.dir, name));
        this.ownNames.delete(name);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') this.ownNames.delete(name);
        else firstError ??= err as NodeJS.ErrnoException;
      }
    }
    if (firstError !== null) throw firstError;
    // rmdir (never recursive) fails on a non-empty directory, which is the point: foreign files
    // stay. EBUSY: the directory is a mount point, which is not ours to remove.
    await fsp.rmdir(this.dir).catch((err: NodeJS.ErrnoException) => {
      if (!['ENOTEMPTY', 'EEXIST', 'ENOENT', 'EBUSY'].includes(err.code ?? '')) throw err;
    });
  }

  /** A source of the entry's deterministic payload (filled by the byte workers, or restamped in place). */
  payloadSource(keyHash: bigint): PayloadChunkSource {
    return this.bytes.payloadSource(keyHash);
  }

  /** A sink that checks each chunk against the payload and fails the read with PayloadMismatchError. */
  verifyingSink(key: string, keyHash: bigint): ChunkSink {
    return async (chunk) => {
      const result = await this.bytes.verify(chunk.buffer, keyHash, chunk.entryOffsetBytes);
      if (!result.ok) throw new PayloadMismatchError(key, result.offsetBytes, result.expectedKeyHash, result.foundKeyHash);
    };
  }

  private checkSize(sizeBytes: number): void {
    if (!Number.isSafeInteger(sizeBytes) || sizeBytes < 0) {
      throw new EntryFileStoreError('VALIDATION', `sizeBytes must be a non-negative integer (got ${sizeBytes})`);
    }
  }
}
