// A worker thread of report-thread.ts: builds reports, comparisons and exports (report-jobs.ts), one
// at a time as the backend sends them, each from a read-only connection of its own to the database
// it names, so that the app's backend goes on answering (and a running suite's events go on flowing)
// meanwhile. Each answer goes back once its connection is closed.
import { parentPort } from 'node:worker_threads';
import { isDamageError, openStoreToRead } from '../store/open-store.ts';
import { sqliteCode } from '../store/sqlite.ts';
import { StoreError } from '../store/store-error.ts';
import type { Store } from '../store/store.ts';
import { toIpcError } from './ipc-error.ts';
import { answerReportJob } from './report-jobs.ts';
import type { ReportReply, ReportWorkerData } from './report-thread.ts';

if (parentPort === null) throw new Error('report-worker.ts must run as a worker thread');
const port = parentPort;

async function answer({ file, job, chooseDatabase, sameFileAs }: ReportWorkerData): Promise<ReportReply> {
  let store: Store;
  try {
    store = openStoreToRead(file, { chooseDatabase, sameFileAs });
  } catch (err) {
    // Another file at the path than the backend's (replaced by a rename): reading it would answer of another database than History's.
    if (err instanceof StoreError && err.code === 'DB_REPLACED') return { type: 'failed', error: toIpcError(err) };
    // The backend's own connection may still read it (the file moved or its mode changed since): it decides.
    return { type: 'unopened', message: toIpcError(err).message };
  }
  try {
    return { type: 'answered', value: await answerReportJob(store, job, { alone: true }) };
  } catch (err) {
    // A page SQLite found damaged (bit rot in a file recorded sound): its SQLite code goes back, so the
    // backend says it as the damage met on its own thread (DB_CORRUPT, the file forgotten as sound).
    const code = sqliteCode(err);
    if (code !== null && isDamageError(err)) return { type: 'damaged', sqliteCode: code, message: (err as Error).message };
    // A refusal (an unknown suite, a stated bandwidth over several drives, EXPORT_FAILED) as the handler throws it.
    return { type: 'failed', error: toIpcError(err) };
  } finally {
    store.close();
  }
}

port.on('message', (data: ReportWorkerData) => {
  void answer(data).then((reply) => port.postMessage(reply));
});
