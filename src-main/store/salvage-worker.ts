// The worker thread of salvage-thread.ts: reads a damaged database (openDamagedStore) or recovers it
// into a new one (recoverDatabase) with its own better-sqlite3 connections, so that the thread that
// started it (the app's backend) goes on answering meanwhile. One job per worker, given in
// workerData; progress, then one answer, go back as messages.
import fs from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { openDamagedStore } from './open-store.ts';
import { recoverDatabase } from './recover.ts';
import { salvageProgressText } from './salvage.ts';
import type { SalvageJob, SalvageReply } from './salvage-thread.ts';
import { StoreError } from './store-error.ts';

if (parentPort === null) throw new Error('salvage-worker.ts must run as a worker thread');
const port = parentPort;
const job = workerData as SalvageJob;

/** Progress at most this often: a message per 500 rows would cost the copy more than it tells. */
const PROGRESS_EVERY_MS = 200;
let lastProgressMs = -Infinity;
const progress = (message: string, always = false): void => {
  const now = performance.now();
  if (!always && now - lastProgressMs < PROGRESS_EVERY_MS) return;
  lastProgressMs = now;
  port.postMessage({ type: 'progress', message } satisfies SalvageReply);
};

function answer(): SalvageReply {
  try {
    if (job.kind === 'recover') {
      const recovery = recoverDatabase(job.from, job.out, { chooseDatabase: job.chooseDatabase, onProgress: (m) => progress(m, !m.startsWith('copying ')) });
      return { type: 'recovered', recovery };
    }
    // The copy is built in a scratch file (the caller's), not in memory: its bytes are then read once,
    // into a buffer that moves to the caller's thread. In memory, SQLite's copy (pages the process
    // does not give back), serialize()'s bytes (outside V8: they cannot move) and a movable copy of
    // them made three copies of the database here, beside the caller's own.
    const damaged = openDamagedStore(job.file, { chooseDatabase: job.chooseDatabase, copyFile: job.copyFile, onProgress: (table, rows, last) => progress(salvageProgressText(table, rows, last)) });
    if (damaged === null) return { type: 'salvaged', copy: null };
    const { store, damage, allPlaced } = damaged;
    const unreadable = [...store.unreadable];
    store.close();
    const read = fs.readFileSync(job.copyFile);
    // Moved whole: a buffer of its own (a file this large is never read into Node's shared pool, but said, not assumed).
    const bytes = read.byteOffset === 0 && read.buffer.byteLength === read.length ? new Uint8Array(read.buffer as ArrayBuffer) : new Uint8Array(read);
    return { type: 'salvaged', copy: { bytes, damage, allPlaced, unreadable } };
  } catch (err) {
    // A StoreError is the answer itself (a refusal, as the same call on the calling thread throws it); anything else is said as it came.
    if (err instanceof StoreError) return { type: 'failed', error: { code: err.code, message: err.message } };
    return { type: 'failed', error: { code: null, message: err instanceof Error ? err.message : String(err) } };
  }
}

const reply = answer();
// The copy's bytes move to the other thread rather than being copied again (a large database's copy is hundreds of MiB).
port.postMessage(reply, reply.type === 'salvaged' && reply.copy !== null ? [reply.copy.bytes.buffer] : []);
