import fs, { type WriteStream } from 'node:fs';
import fsp from 'node:fs/promises';
import { promisify } from 'node:util';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import type { Writable } from 'node:stream';
import { KvbenchError } from '../../../../src-shared/domain/errors.ts';
import type { TierName } from '../../tiers/tier-backend.ts';
import { resolveOutputTarget } from '../../../util/write-file-atomic.ts';

/**
 * Trace-only mode (`--io-trace-log PATH`, reference `kv_cache/tracer.py`): no byte moves; every logical
 * I/O the cache would have done is one CSV row, for replay by other tools (fio, storage simulators).
 */
export const IO_TRACE_HEADER = 'Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase';

export type TraceOperation = 'Read' | 'Write';
/**
 * Prefill: an allocation (new entry, precondition and pre-population writes too). Decode / Prefill /
 * Both: a hit, with the phase of the caller (Both = a prefill+decode request's prefix-cache read).
 * Evict: the two halves of a demotion (Read on the source tier, Write on the destination).
 */
export type TracePhase = 'Prefill' | 'Decode' | 'Both' | 'Evict';

export interface TraceRecord {
  op: TraceOperation;
  tier: TierName;
  key: string;
  /** Bytes of the entry on this rank (after tensor-parallel division). */
  sizeBytes: number;
  phase: TracePhase;
}

/**
 * The phase a read is logged with, as the reference: a request's shared-prefix reads (system prompt,
 * prefix blocks) carry the request's phase — `Both` for prefill+decode —; multi-turn reloads, RAG
 * chunks and decode reads are `Decode`; every allocation is `Prefill`.
 */
export function prefixReadPhase(requestPhase: 'prefill' | 'decode' | 'prefill_decode'): TracePhase {
  return requestPhase === 'prefill_decode' ? 'Both' : requestPhase === 'prefill' ? 'Prefill' : 'Decode';
}

/** The reference's tier labels. */
export const TRACE_TIER_LABELS: Readonly<Record<TierName, string>> = { gpu: 'Tier-0', cpu: 'Tier-1', storage: 'Tier-2' };

/** zstd level of `.zst` traces (the reference's). */
export const TRACE_ZSTD_LEVEL = 3;
/** Rows are handed to the stream in pieces of about this many characters. */
const FLUSH_CHARS = 64 * 1024;
/** Above this much output waiting for the disk, `waitForRoom` makes trace-mode I/O wait. */
const HIGH_WATER_BYTES = 8 * 1024 * 1024;

export interface IoTraceLogOptions {
  /** Seconds since the Unix epoch (default: wall clock at µs resolution, monotonic within the run). */
  clock?: () => number;
}

export interface IoTraceLogSummary {
  /** The trace: the asked path, or NAME.partial where writing failed (what was written before). */
  path: string;
  /** Operations logged (an incomplete trace holds fewer). */
  rows: number;
  compressed: boolean;
  /** Null when every row is in `path`; otherwise why not, for the run's status reason. */
  incomplete: string | null;
}

/** Where a trace is written until it is complete, and kept when it cannot be. */
export function partialTracePath(file: string): string {
  return `${file}.partial`;
}

/** A CSV field: quoted only when it must be (a comma, quote or line break in a key). */
function csvField(s: string): string {
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

/**
 * The I/O trace file: `Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase`, one row per logical I/O,
 * Timestamp = Unix epoch seconds with 6 decimals. A path ending in `.zst` is written as a zstd stream
 * (level 3; Node's built-in zstd, so no extra package is needed as the reference's `zstandard` was).
 * `record` is synchronous and cheap (rows are batched); memory stays bounded because trace-mode tiers
 * await `waitForRoom()` when the disk falls behind.
 *
 * The rows go to NAME.partial, renamed to NAME once all are on disk and the run measured something: a
 * trace of that name from an earlier run stays until such a one replaces it. A trace whose writing
 * failed (a full disk), or whose run was aborted or failed, is never taken for a whole one; it stays
 * as NAME.partial, and `close` says so.
 */
export class IoTraceLog {
  readonly path: string;
  readonly partialPath: string;
  readonly compressed: boolean;
  /** The file's descriptor, closed by `close` (not the stream): it is synced before the rename. */
  readonly #fd: number;
  readonly #file: WriteStream;
  /** Where rows are written: the zstd compressor, or the file itself. */
  readonly #sink: Writable;
  readonly #done: Promise<void>;
  readonly #clock: () => number;
  #chunks: string[] = [];
  #chunkChars = 0;
  #rows = 0;
  #error: Error | null = null;
  #failureListeners: ((reason: string) => void)[] = [];
  #closed = false;
  #summary: Promise<IoTraceLogSummary> | null = null;

  private constructor(file: string, fd: number, opts: IoTraceLogOptions) {
    this.path = file;
    this.partialPath = partialTracePath(file);
    this.compressed = file.endsWith('.zst');
    this.#fd = fd;
    const stream = fs.createWriteStream('', { fd, autoClose: false });
    this.#file = stream;
    const origin = performance.timeOrigin;
    this.#clock = opts.clock ?? (() => (origin + performance.now()) / 1000);
    if (this.compressed) {
      const zstd = zlib.createZstdCompress({ params: { [zlib.constants.ZSTD_c_compressionLevel]: TRACE_ZSTD_LEVEL } });
      this.#sink = zstd;
      this.#done = pipeline(zstd, stream);
    } else {
      this.#sink = stream;
      this.#done = new Promise<void>((resolve, reject) => {
        stream.once('finish', resolve);
        stream.once('error', reject);
      });
    }
    this.#done.catch((err: Error) => this.#fail(err));
    this.#sink.on('error', (err: Error) => this.#fail(err));
    this.#write(`${IO_TRACE_HEADER}\n`);
  }

  /**
   * Creates NAME.partial (and the parent directories) and writes the header. A symbolic link is
   * written through: the trace goes beside the file it leads to and is renamed onto that, the link
   * stays. A pipe or device cannot be renamed onto, and is never replaced: refused.
   */
  static async open(file: string, opts: IoTraceLogOptions = {}): Promise<IoTraceLog> {
    const abs = path.resolve(file);
    try {
      const target = resolveOutputTarget(abs);
      if (target.kind !== 'replace') throw new Error('it exists and is not a regular file');
      await fsp.mkdir(path.dirname(target.path), { recursive: true });
      return new IoTraceLog(target.path, await promisify(fs.open)(partialTracePath(target.path), 'w'), opts);
    } catch (err) {
      throw new KvbenchError('TARGET_NOT_WRITABLE', `cannot create the --io-trace-log file ${abs}: ${(err as Error).message}`);
    }
  }

  get rows(): number {
    return this.#rows;
  }

  /** The first write error, if any (the run should report it; `close` says the trace is incomplete). */
  get error(): Error | null {
    return this.#error;
  }

  /**
   * Calls `listener` once, with the reason `close` will give, when a write fails: at once if one has.
   * The run can stop then, rather than measure on with a trace that no longer records anything.
   */
  onFailure(listener: (reason: string) => void): void {
    if (this.#error) listener(this.#incompleteReason());
    else this.#failureListeners.push(listener);
  }

  record(r: TraceRecord): void {
    if (this.#closed) throw new Error('IoTraceLog.record after close');
    const row = `${this.#clock().toFixed(6)},${r.op},${Math.trunc(r.sizeBytes)},${TRACE_TIER_LABELS[r.tier]},${csvField(r.key)},${r.phase}\n`;
    this.#chunks.push(row);
    this.#chunkChars += row.length;
    this.#rows++;
    if (this.#chunkChars >= FLUSH_CHARS) this.#flush();
  }

  /** Resolves at once unless too much output is waiting for the disk; then when it has drained. */
  waitForRoom(): Promise<void> {
    if (this.#error || this.#closed) return Promise.resolve();
    if (this.#pendingBytes() <= HIGH_WATER_BYTES) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const check = (): void => {
        if (this.#error || this.#pendingBytes() <= HIGH_WATER_BYTES) {
          this.#sink.off('drain', check);
          this.#file.off('drain', check);
          clearInterval(timer);
          resolve();
        }
      };
      const timer = setInterval(check, 10);
      this.#sink.on('drain', check);
      this.#file.on('drain', check);
    });
  }

  /**
   * Writes what is buffered, waits until every byte is on disk and renames NAME.partial to NAME.
   * `runEnded`: why the run that wrote it ended without measuring (aborted, failed), or null; such a
   * trace, like one whose write failed, stays NAME.partial, and the summary says why it is
   * incomplete. Never throws; a second call returns the first one's summary.
   */
  close(runEnded: string | null = null): Promise<IoTraceLogSummary> {
    this.#summary ??= this.#finish(runEnded);
    return this.#summary;
  }

  async #finish(runEnded: string | null): Promise<IoTraceLogSummary> {
    this.#flush();
    this.#closed = true;
    this.#sink.end();
    try {
      await this.#done;
      if (!this.#error) await promisify(fs.fsync)(this.#fd);
    } catch (err) {
      this.#fail(err as Error);
    }
    await promisify(fs.close)(this.#fd).catch((err: Error) => this.#fail(err));
    if (!this.#error && runEnded === null) await fsp.rename(this.partialPath, this.path).catch((err: Error) => this.#fail(err));
    const incomplete = this.#error
      ? this.#incompleteReason()
      : runEnded !== null
        ? `the --io-trace-log trace is incomplete: the run ${runEnded}; what was written is kept in ${this.partialPath}`
        : null;
    return { path: incomplete === null ? this.path : this.partialPath, rows: this.#rows, compressed: this.compressed, incomplete };
  }

  #fail(err: Error): void {
    if (this.#error) return;
    this.#error = err;
    for (const listener of this.#failureListeners.splice(0)) listener(this.#incompleteReason());
  }

  #incompleteReason(): string {
    return `the --io-trace-log trace is incomplete: writing it failed (${this.#error!.message}); what was written is kept in ${this.partialPath}`;
  }

  #pendingBytes(): number {
    return this.#sink.writableLength + (this.compressed ? this.#file.writableLength : 0);
  }

  #flush(): void {
    if (this.#chunks.length === 0) return;
    const text = this.#chunks.join('');
    this.#chunks = [];
    this.#chunkChars = 0;
    this.#write(text);
  }

  #write(text: string): void {
    if (this.#error) return;
    this.#sink.write(text);
  }
}
