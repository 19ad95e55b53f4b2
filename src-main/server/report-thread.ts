// The app's reports and exports on a worker thread. Building one reads every selected trial and
// merges its latency histograms, synchronous work that on a large database takes seconds to minutes
// (2,000 trials: 7 s of CPU; an export of 5,000: 25 s): on the backend's thread, every other request
// and a running suite's live events waited for it (bench/report-off-thread.ts measures the wait).
// The worker reads the database file through a connection of its own, read-only (WAL lets it read
// beside the backend's writer, in one consistent snapshot: report-jobs.ts), and answers exactly what
// the backend's thread would (the same report-jobs.ts), or its refusal with the same code. A worker
// that ends without answering (out of memory, a crash) is said as such, in the contract's codes;
// one stopped (kvbench closing, the database switched) is CANCELLED. An export is written by the
// worker into the temporary file the backend named, a piece at a time, never handed back as bytes;
// the backend renames it into place once the worker has answered, or removes it once a worker that
// did not answer has exited (a stopped one leaves no part of a file anywhere).
//
// The workers are kept for the next job a while (ReportWorkers): a worker started for each job spent
// about 0.4 s of CPU loading its modules and warming up, which tripled the cost of the report of one
// suite (0.2 s on the backend's thread), the report the page asks for most. A job has its worker to
// itself, and opens the database for itself (so a switch to another needs nothing of the workers).
import { Worker, type ResourceLimits } from 'node:worker_threads';
import type { IpcError } from '../../src-shared/ipc/contract.ts';
import type { FileIdentity } from '../store/file-identity.ts';
import { workerEndText, type WorkerEnd } from '../util/worker-job.ts';
import { fail } from './ipc-error.ts';
import type { ReportAnswer, ReportChannel, ReportJob } from './report-jobs.ts';

/** What a report worker is given. */
export interface ReportWorkerData {
  /** The database the backend has open (and has checked). */
  file: string;
  /** The file the backend's connection has open (device and inode): the worker reads only that one (DB_REPLACED otherwise). */
  sameFileAs: FileIdentity | null;
  job: ReportJob;
  /** How a person chooses another database, in a refused open's words. */
  chooseDatabase: string | undefined;
}

/** What a report worker answers. */
export type ReportReply =
  | { type: 'answered'; value: ReportAnswer }
  | { type: 'failed'; error: IpcError }
  /** SQLite found a page damaged (isDamageError): its code and words, thrown again as SQLite threw them, for the caller to say as damage. */
  | { type: 'damaged'; sqliteCode: string; message: string }
  /** It could not open the file: the backend's own connection, open before, may still read it. */
  | { type: 'unopened'; message: string };

export interface ReportJobOptions {
  /** Stops the job (its worker is stopped with it); its reason (a string) says why, in the CANCELLED answer. */
  signal?: AbortSignal;
  chooseDatabase?: string;
  /** The file the caller's connection has open: the worker refuses (DB_REPLACED) where the path names another. */
  sameFileAs?: FileIdentity | null;
}

export interface ReportWorkersOptions {
  /** Jobs at once, each on a worker of its own (each holds its trials and histograms: hundreds of MiB for thousands); the others wait their turn, in order. */
  size: number;
  /**
   * Of those, how many may be exports (default: all). Fewer than `size` keeps a worker for reports
   * and comparisons: an export of thousands of trials takes minutes, a report of one suite a fraction
   * of a second, and the page waits for the report. Exports past this wait for one another.
   */
  exportSlots?: number;
  /** A worker without a job for this long exits, handing back its memory; the next job starts another. */
  idleMs?: number;
  /** Each worker's memory limits (tests make one run out). */
  resourceLimits?: ResourceLimits;
}

/** What each job is called in its refusals. */
const WHAT: Record<ReportChannel, string> = { 'report.build': 'the report', 'report.compare': 'the comparison', 'export.create': 'the export' };

/** `channel`'s answer stopped (CANCELLED), `reason` saying why. */
export function stoppedError(channel: ReportChannel, reason: string): Error {
  return Object.assign(new Error(`${WHAT[channel]} was stopped: ${reason}`), { code: 'CANCELLED' });
}

/** How `job` on `file` failed where its worker ended without answering, in the contract's codes. */
function diedError(job: ReportJob, file: string, end: WorkerEnd): Error {
  if ('aborted' in end) return stoppedError(job.channel, typeof end.reason === 'string' ? end.reason : 'it was cancelled');
  const how = workerEndText(end, '');
  return job.channel === 'export.create'
    ? Object.assign(new Error(`export failed: ${how}. Export fewer trials (fewer suites, a label or a scenario), or run kvbench export --db ${file} --out FILE in a terminal.`), { code: 'EXPORT_FAILED' })
    : Object.assign(new Error(`${WHAT[job.channel]} could not be built: ${how}. Choose fewer trials (fewer suites, a label or a scenario), or run kvbench report --db ${file} in a terminal.`), { code: 'INTERNAL' });
}

/** A worker's job under way: how it ends. */
interface Running {
  resolve: (reply: ReportReply) => void;
  reject: (err: Error) => void;
  died: (end: WorkerEnd) => Error;
  signal: AbortSignal | undefined;
  onAbort: () => void;
  aborted: boolean;
  failure: Error | null;
}

interface Slot {
  worker: Worker;
  job: Running | null;
  idleTimer: NodeJS.Timeout | null;
}

/** Workers for the reports and exports of one backend: at most `size` jobs at once, each on a worker of its own. */
export class ReportWorkers {
  private readonly slots = new Set<Slot>();
  private readonly waiting: { channel: ReportChannel; go: () => void }[] = [];
  /** Jobs holding a turn (running, or about to), by channel. */
  private readonly runningJobs: ReportChannel[] = [];
  private closed = false;
  private readonly o: ReportWorkersOptions;

  constructor(o: ReportWorkersOptions) {
    this.o = o;
  }

  /**
   * The answer to `job` read from `file` on a worker thread: what answerReportJob answers on the
   * calling thread, or its refusal thrown with the same code (damage SQLite met: its SQLITE_ code, as
   * SQLite threw it, which the backend's isDamageError recognises); null where the worker could not open
   * the file (the caller's connection may still read it).
   */
  async answer<J extends ReportJob>(file: string, job: J, opts: ReportJobOptions = {}): Promise<ReportAnswer<J['channel']> | null> {
    const data: ReportWorkerData = { file, job, chooseDatabase: opts.chooseDatabase, sameFileAs: opts.sameFileAs ?? null };
    await this.turn(job.channel);
    let reply: ReportReply;
    try {
      reply = await this.run(data, opts.signal, (end) => diedError(job, file, end));
    } finally {
      this.release(job.channel);
    }
    if (reply.type === 'unopened') return null;
    if (reply.type === 'failed') fail(reply.error.code, reply.error.message);
    if (reply.type === 'damaged') throw Object.assign(new Error(reply.message), { code: reply.sqliteCode });
    return reply.value as ReportAnswer<J['channel']>;
  }

  /** Which jobs hold a turn (running, or about to) and which wait for one, each by its channel, in order. */
  occupancy(): { running: ReportChannel[]; waiting: ReportChannel[] } {
    return { running: [...this.runningJobs], waiting: this.waiting.map((w) => w.channel) };
  }

  /** Stops the workers without a job (those with one are stopped through their jobs' signals); no worker starts after. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.slots].filter((s) => s.job === null).map((s) => s.worker.terminate()));
  }

  /** Whether a job of `channel` may start now: a worker free, and for an export, one of the exports' own. */
  private mayStart(channel: ReportChannel): boolean {
    if (this.runningJobs.length >= this.o.size) return false;
    return channel !== 'export.create' || this.runningJobs.filter((c) => c === 'export.create').length < (this.o.exportSlots ?? this.o.size);
  }

  private async turn(channel: ReportChannel): Promise<void> {
    // Never ahead of a job of its kind: release() starts every waiting job that may start, so one that waits may not.
    if (this.mayStart(channel)) this.runningJobs.push(channel);
    else await new Promise<void>((go) => this.waiting.push({ channel, go })); // the turn is handed over by release()
  }

  /** Ends `channel`'s turn, and hands turns to the jobs waiting that may now start, first asked first. */
  private release(channel: ReportChannel): void {
    this.runningJobs.splice(this.runningJobs.indexOf(channel), 1);
    for (let i = 0; i < this.waiting.length; ) {
      const w = this.waiting[i];
      if (!this.mayStart(w.channel)) {
        i += 1;
        continue;
      }
      this.waiting.splice(i, 1);
      this.runningJobs.push(w.channel);
      w.go();
    }
  }

  private run(data: ReportWorkerData, signal: AbortSignal | undefined, died: (end: WorkerEnd) => Error): Promise<ReportReply> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted || this.closed) {
        reject(died({ aborted: true, reason: signal?.reason ?? 'kvbench is closing' }));
        return;
      }
      const slot = [...this.slots].find((s) => s.job === null) ?? this.spawn();
      const job: Running = {
        resolve,
        reject,
        died,
        signal,
        aborted: false,
        failure: null,
        onAbort: () => {
          job.aborted = true;
          void slot.worker.terminate(); // said at its exit
        },
      };
      slot.job = job;
      if (slot.idleTimer !== null) clearTimeout(slot.idleTimer);
      slot.idleTimer = null;
      slot.worker.ref();
      signal?.addEventListener('abort', job.onAbort, { once: true });
      slot.worker.postMessage(data);
    });
  }

  private spawn(): Slot {
    const worker = new Worker(new URL('./report-worker.ts', import.meta.url), this.o.resourceLimits ? { resourceLimits: this.o.resourceLimits } : {});
    const slot: Slot = { worker, job: null, idleTimer: null };
    this.slots.add(slot);
    worker.on('message', (reply: ReportReply) => {
      const job = slot.job;
      if (job === null || job.aborted) return;
      // Its job is over once it answers: the worker has closed its connection, and waits for the next.
      slot.job = null;
      job.signal?.removeEventListener('abort', job.onAbort);
      this.idle(slot);
      job.resolve(reply);
    });
    worker.on('error', (error) => {
      if (slot.job) slot.job.failure ??= error;
    });
    worker.on('exit', (exitCode) => {
      this.slots.delete(slot);
      if (slot.idleTimer !== null) clearTimeout(slot.idleTimer);
      const job = slot.job;
      if (job === null) return;
      slot.job = null;
      job.signal?.removeEventListener('abort', job.onAbort);
      job.reject(job.died(job.aborted ? { aborted: true, reason: job.signal?.reason } : job.failure ? { error: job.failure } : { exitCode }));
    });
    return slot;
  }

  /** A worker without a job keeps nothing alive (a process may end with it there), and exits after idleMs. */
  private idle(slot: Slot): void {
    slot.worker.unref();
    if (this.closed) {
      void slot.worker.terminate();
      return;
    }
    slot.idleTimer = setTimeout(() => void slot.worker.terminate(), this.o.idleMs ?? REPORT_WORKER_IDLE_MS);
    slot.idleTimer.unref();
  }
}

/**
 * The backend's report workers: two jobs at once (each holds its trials and histograms: hundreds of
 * MiB for thousands), at most one of them an export, so a report or a comparison never waits behind
 * exports (a second export waits for the first).
 */
export const REPORT_WORKER_LANES: ReportWorkersOptions = { size: 2, exportSlots: 1 };

/** How long a report worker waits for another job before it exits. */
export const REPORT_WORKER_IDLE_MS = 60_000;
