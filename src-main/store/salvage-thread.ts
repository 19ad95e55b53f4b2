// Reading a damaged database and recovering it, on a worker thread: the same openDamagedStore and
// recoverDatabase the CLI calls, for a process that must go on answering while they run (the app's
// backend: `kvbench serve` and the Electron main process). On a large database they take seconds to
// minutes (10,000 trials: 6 s to read, 14 s to recover, bench/salvage-off-thread.ts), all of it
// synchronous SQLite work, which on the backend's own thread left every other request (the page's
// polling, a second tab) waiting.
//
// The worker opens the damaged file with its own better-sqlite3 connections; the file is only read,
// there as here. A salvaged copy comes back as the bytes of its in-memory database (serialized,
// moved, not copied again) and is opened in memory here. A refusal (StoreError) comes back as it
// would be thrown here. A worker that dies without answering (out of memory, a crash, stopped
// because kvbench closes) is said as such; a recovery's half-written file is removed (the new
// database only gets its name once whole and checked, so it is never half there).
import fs from 'node:fs';
import os from 'node:os';
import type { ResourceLimits } from 'node:worker_threads';
import path from 'node:path';
import type { StoreErrorCode } from '../../src-shared/domain/store-types.ts';
import type { DamagedStore } from './open-store.ts';
import { removeRecoveryLeftovers, type Recovery } from './recover.ts';
import { openSerialized } from './sqlite.ts';
import { StoreError } from './store-error.ts';
import { Store } from './store.ts';
import { leftByDeadProcesses } from '../util/dead-process-leftovers.ts';
import { statOrNull } from '../util/stat-or-null.ts';
import { runWorkerJob, workerEndText } from '../util/worker-job.ts';

/** What a worker is asked to do (its workerData). */
export type SalvageJob =
  /** `copyFile`: where the worker builds the copy (a new file in a folder of the caller's, which removes it). */
  | { kind: 'salvage'; file: string; chooseDatabase: string | undefined; copyFile: string }
  | { kind: 'recover'; from: string; out: string; chooseDatabase: string | undefined };

/** What a worker says: progress, then one answer. */
export type SalvageReply =
  | { type: 'progress'; message: string }
  | { type: 'salvaged'; copy: { bytes: Uint8Array<ArrayBuffer>; damage: string; allPlaced: boolean; unreadable: string[] } | null }
  | { type: 'recovered'; recovery: Recovery }
  /** `code` null: not a StoreError (an error the same call would have thrown as it is). */
  | { type: 'failed'; error: { code: StoreErrorCode | null; message: string } };

export interface OffThreadOptions {
  /** How a person chooses another database, in refusals (OpenStoreOptions.chooseDatabase). */
  chooseDatabase?: string;
  /** Hears the work's progress in words ("copying trials: 4,000 rows of about 10,000"), a few times a second at most. */
  onProgress?: (message: string) => void;
  /** Stops the worker (kvbench closing): the call then fails, as one whose worker died. */
  signal?: AbortSignal;
  /** The worker's memory limits (tests make one run out). */
  resourceLimits?: ResourceLimits;
}

/** What closing kvbench (the signal) means to a salvage or a recovery, in its refusal. */
const STOPPED = 'it was stopped, as kvbench is closing';

/**
 * Runs `job` on a worker thread: its answer, or `died(how)` thrown where the worker ended without
 * one. Either once the worker has exited: nothing of it still writes, and what it held in memory (a
 * salvaged copy's serialized bytes, as large as the database) is freed before the caller makes its
 * own copy of the answer's.
 */
function runJob(job: SalvageJob, opts: OffThreadOptions, died: (how: string) => Error): Promise<Exclude<SalvageReply, { type: 'progress' }>> {
  return runWorkerJob<SalvageReply>(
    new URL('./salvage-worker.ts', import.meta.url),
    job,
    {
      ...(opts.signal ? { signal: opts.signal } : {}),
      ...(opts.resourceLimits ? { resourceLimits: opts.resourceLimits } : {}),
      isAnswer: (m) => m.type !== 'progress',
      // Answered once it has exited: what it held (a salvaged copy as large as the database) is freed first.
      answerAtExit: true,
      onMessage: (m) => m.type === 'progress' && opts.onProgress?.(m.message),
    },
    (end) => died(workerEndText(end, STOPPED)),
  ) as Promise<Exclude<SalvageReply, { type: 'progress' }>>;
}

/** A worker's refusal as the same call on this thread throws it. */
function thrown(error: { code: StoreErrorCode | null; message: string }): Error {
  return error.code === null ? new Error(error.message) : new StoreError(error.code, error.message);
}

/** How the salvage's scratch folders in the system's temporary folder are named: then the pid of the process that made one. */
const SCRATCH_PREFIX = 'kvbench-salvage-';
/** How long a dead process's scratch folder must have been left unchanged before a salvage removes it (as recover.ts's STALE_RECOVERY_MS). */
export const STALE_SCRATCH_MS = 10 * 60_000;
/** The scratch folders of this process's salvages under way (removeSalvageScratchNow). */
const scratchInUse = new Set<string>();

/**
 * Removes the scratch folders of this process's salvages under way, at once: for a process stopped
 * by a signal while it salvages (kvbench serve's first open), which exits right after, before the
 * salvage's own clean-up could run.
 */
export function removeSalvageScratchNow(): void {
  for (const dir of scratchInUse) fs.rmSync(dir, { recursive: true, force: true });
  scratchInUse.clear();
}

/**
 * Removes the scratch folders that salvages of processes no longer running left in the system's
 * temporary folder (killed with SIGKILL, or a power loss), where nothing in them changed for
 * STALE_SCRATCH_MS (a process in another PID namespace sharing the folder may look dead here) and
 * they are this user's. Each holds a copy of a database's rows, up to its size.
 */
export function removeStaleSalvageScratch(nowMs = Date.now()): string[] {
  const removed: string[] = [];
  for (const dir of leftByDeadProcesses(os.tmpdir(), SCRATCH_PREFIX, /^(\d+)-[A-Za-z0-9]{6}$/)) {
    try {
      const st = fs.lstatSync(dir);
      if (!st.isDirectory() || (process.getuid && st.uid !== process.getuid())) continue;
      const changedMs = Math.max(st.mtimeMs, ...fs.readdirSync(dir).map((f) => statOrNull(path.join(dir, f))?.mtimeMs ?? 0));
      if (nowMs - changedMs < STALE_SCRATCH_MS) continue;
      fs.rmSync(dir, { recursive: true, force: true });
      removed.push(dir);
    } catch {
      // gone meanwhile, or not ours to read: left
    }
  }
  return removed;
}

/**
 * openDamagedStore on a worker thread: the same copy of what `file` still holds (a Store in memory,
 * read-only, `unreadable` saying what it lacks), the same null and the same refusals.
 */
export async function openDamagedStoreOffThread(file: string, opts: OffThreadOptions = {}): Promise<DamagedStore | null> {
  const abs = path.resolve(file);
  removeStaleSalvageScratch();
  // The worker's scratch copy: readable by this user only (it holds the database's rows), removed once
  // the worker has exited, however it ended; its name holds this process's id, so a later salvage
  // removes it where this process was killed before it could (removeStaleSalvageScratch).
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), `${SCRATCH_PREFIX}${process.pid}-`));
  scratchInUse.add(scratch);
  let reply: Exclude<SalvageReply, { type: 'progress' }>;
  try {
    reply = await runJob({ kind: 'salvage', file: abs, chooseDatabase: opts.chooseDatabase, copyFile: path.join(scratch, 'copy.db') }, opts, (how) =>
      new StoreError('DB_CORRUPT', `${abs} is damaged, and reading what can still be read of it stopped: ${how}. The file was only read; restore a backup, or read it with the kvbench CLI (history, report, export --db ${abs}).`),
    );
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
    scratchInUse.delete(scratch);
  }
  if (reply.type === 'failed') throw thrown(reply.error);
  if (reply.type !== 'salvaged') throw new Error(`salvage worker: unexpected answer ${reply.type}`);
  if (reply.copy === null) return null;
  const { bytes, damage, allPlaced, unreadable } = reply.copy;
  const db = openSerialized(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length));
  try {
    db.pragma('foreign_keys = ON'); // a connection's setting: the worker's copy had it on
  } catch (err) {
    db.close();
    throw err;
  }
  const store = new Store(db, abs, true);
  store.noteLost(unreadable);
  return { store, damage, allPlaced };
}

/**
 * recoverDatabase on a worker thread: the same new database, the same Recovery and the same refusals.
 * A worker that dies leaves nothing behind it: its temporary file is removed, and the new database,
 * named only once written whole and checked, is either there whole or not at all (said either way).
 */
export async function recoverDatabaseOffThread(from: string, out: string, opts: OffThreadOptions = {}): Promise<Recovery> {
  const src = path.resolve(from);
  const dst = path.resolve(out);
  // A file there already is refused by the worker, never written: only one that appears is the recovery's.
  const thereBefore = statOrNull(dst) !== null;
  const reply = await runJob({ kind: 'recover', from: src, out: dst, chooseDatabase: opts.chooseDatabase }, opts, (how) => {
    removeRecoveryLeftovers(dst);
    const written = !thereBefore && statOrNull(dst) !== null;
    return new StoreError(
      'DB_WRITE_FAILED',
      `the recovery of ${src} into ${dst} stopped: ${how}. ` +
        (written
          ? `${dst} had been written and checked before it stopped: it is whole, and can be opened (in Settings, or with --db); ${src} was only read.`
          : `Nothing was written to ${dst}, and ${src} was only read: try again, or run kvbench recover --db ${src} --out ${dst} in a terminal.`),
    );
  });
  if (reply.type === 'failed') throw thrown(reply.error);
  if (reply.type !== 'recovered') throw new Error(`salvage worker: unexpected answer ${reply.type}`);
  return reply.recovery;
}
