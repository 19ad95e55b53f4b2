// The backend of the desktop app and of `kvbench serve`: the contract's handlers over the same
// services the CLI composes (store, hardware detection, planner, suite runner, report model,
// exports, import). No second engine and no second database layer: this file only wires them.
//
// Transports (Electron IPC in src-main/app, HTTP + WebSocket in server/http-server.ts) call
// `invoke(channel, rawRequest)`: the request is validated against the contract, the handler runs,
// the response is validated too, and every failure comes back as `{ ok: false, error }`.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { serverMetricCaveats, type EndpointRequestSample, type EndpointRunRecord } from '../../src-shared/domain/endpoint.ts';
import type { HardwareProfile } from '../../src-shared/domain/hardware.ts';
import { shownInput } from '../../src-shared/domain/label-text.ts';
import { availableModelNames, DEFAULT_MODEL_KEY } from '../../src-shared/domain/models.ts';
import { isScenarioId, type SuiteEvent, type SuitePlan } from '../../src-shared/domain/scenarios.ts';
import { KVBENCH_VERSION } from '../../src-shared/domain/version.ts';
import { CHANNELS, HTTP_DOWNLOAD_PREFIX, isChannel, type Channel } from '../../src-shared/ipc/channels.ts';
import {
  CONTRACT,
  MAX_FAILED_REQUESTS,
  type IpcError,
  type ParsedRequestOf,
  type PlanRequest,
  type DamagedDatabase,
  type ResponseOf,
  type Result,
  type Settings,
  type SuiteStatus,
} from '../../src-shared/ipc/contract.ts';
import type { AppEvent } from '../../src-shared/ipc/events.ts';
import { systemDirectoryError } from '../engine/config/system-directories.ts';
import { compareLabels } from '../endpoint/endpoint-compare.ts';
import { buildEndpointExportModel, renderEndpointExport } from '../endpoint/endpoint-export.ts';
import { EndpointStore } from '../endpoint/endpoint-store.ts';
import { cautionsOf } from '../export/report-model.ts';
import { countFacetGroups } from '../../src-shared/domain/facet-matches.ts';
import { cacheDirRefusal } from '../hardware/cache-dir-access.ts';
import { importResultsFiles, parseImportRunFlags } from '../store/import-results.ts';
import { createDatabaseFile } from '../store/database-file.ts';
import { isDamageError, type OpenStoreOptions } from '../store/open-store.ts';
import { forgetSound } from '../store/sound-file-record.ts';
import { openDamagedStoreOffThread, recoverDatabaseOffThread } from '../store/salvage-thread.ts';
import type { Recovery } from '../store/recover.ts';
import { recoveryNotice } from '../store/schema-meta.ts';
import { historyPageInMemory } from '../store/history-order.ts';
import { StoreError } from '../store/store-error.ts';
import { trialEngineOf, withStoredVerdict, type TrialEngine } from '../../src-shared/domain/trial-engine.ts';
import { trialGpuOf, type TrialGpu } from '../../src-shared/domain/gpu-tier.ts';
import type { Store } from '../store/store.ts';
import { chosenScenarioIds, ENGINE_HAS_GPU_TIER, planOptionErrors, planSuite, type PlanOptions } from '../suite/planner.ts';
import { resumeSuite, runSuite, type ResumeOptions, type StartEngineFn, type SuiteRunResult } from '../suite/runner.ts';
import { backfillNotice, detectForSuite, openStoreAndRecover, planUsesGpu, resumeProbe, scenariosUseGpu, type OpenedStore } from '../suite/services.ts';
import { resumeRefusalFor, resumeVersions } from '../suite/resume-versions.ts';
import { resumeVersionsText } from '../../src-shared/domain/resume-versions.ts';
import { statOrNull } from '../util/stat-or-null.ts';
import { hardwareAdvice } from '../hardware/advice.ts';
import { removeCreatedDirs } from '../util/created-dirs.ts';
import { droppedFields } from './dropped-fields.ts';
import { fail, toIpcError } from './ipc-error.ts';
import { databaseOutputError } from '../cli/database-output.ts';
import { abandonAtomicFile, atomicFileOf, commitAtomicFile, FileWriteError, outputFileProblem, type AtomicFile } from '../util/write-file-atomic.ts';
import { ExportDownloads, type OfferedDownload } from './export-downloads.ts';
import { answerReportJob, EXPORT_MIME_TYPES, exportedFile, filterOf, selectionOf, storageExportFileName, type ReportAnswer, type ReportChannel, type ReportJob } from './report-jobs.ts';
import { REPORT_WORKER_LANES, ReportWorkers, stoppedError } from './report-thread.ts';
import { databasePathRefusal, loadSettings, saveSettings } from './settings.ts';

export type DetectFn = (cacheDir: string, opts: { probe: boolean; profile: string; signal?: AbortSignal; gpuScenarios?: boolean }) => Promise<HardwareProfile>;

export interface BackendOptions {
  mode: 'electron' | 'browser';
  /** Where the settings are kept (read at start, written on change). */
  settingsFile: string;
  /** Defaults for settings the file does not have. */
  defaults: Settings;
  /** An explicit database (--db, KVBENCH_DB): used instead of the settings' one until changed there. */
  databasePath?: string | null;
  /** The engine starter for the suite runner: the Electron utility process in the app; the Node child by default. */
  startEngine?: StartEngineFn;
  /** Hardware detection (tests inject a fake). */
  detect?: DetectFn;
  cancelGraceMs?: number;
  log?: (level: 'info' | 'warn' | 'error', message: string) => void;
  /**
   * The desktop app: asks where to save an export (its save dialog, `fileName` offered), null where
   * the user closed it. The export is then written there (a temporary beside it, renamed over it).
   * Without it (kvbench serve), an export is written to a private temporary file the page downloads.
   */
  chooseExportFile?: (fileName: string) => Promise<string | null>;
  /** Where kvbench serve's exports wait for their download (tests). */
  downloads?: ExportDownloads;
}

type Handlers = { [C in Channel]: (request: ParsedRequestOf<C>) => Promise<ResponseOf<C>> };

export interface Backend {
  invoke(channel: string, request: unknown): Promise<Result<unknown>>;
  /** Every event for the page; returns the unsubscribe function. */
  subscribe(listener: (event: AppEvent) => void): () => void;
  /** The handler of every channel (for the exhaustiveness test). */
  readonly channels: readonly Channel[];
  readonly databasePath: string;
  readonly suiteState: SuiteStatus['state'];
  /** kvbench serve's exports, each downloaded once by its token (export.create's `delivery.url`). */
  readonly downloads: Pick<ExportDownloads, 'take' | 'done'>;
  /** Cancels a running suite (partial results kept), waits for it, closes the database. */
  close(): Promise<void>;
}

/** How the log names an answer's fields that its response schema lacks (droppedFields): drift between a handler and the contract. */
export const CONTRACT_DROPPED = 'the answer has fields its contract schema lacks, left out of the response';

/** How many progress events a status snapshot keeps (about a minute at 10 per second). */
const PROGRESS_KEPT = 600;
/** Why a report or an export reading the database left was stopped. */
const switchedAway = (databasePath: string): string => `the database was switched to ${databasePath} (Settings) while it was being built; ask for it again to read that database`;
/** How often the backend looks whether its database's file was replaced at its path (one stat). */
const REPLACED_LOOK_MS = 2_000;
/** A detection is reused for re-planning within this time (the plan form re-plans on every change). */
const DETECT_REUSE_MS = 30_000;

interface ActiveRun {
  state: 'preparing' | 'running';
  request: PlanRequest;
  plan: SuitePlan | null;
  suiteId: number | null;
  startedAt: string;
  controller: AbortController;
  events: AppEvent[];
  progressCount: number;
  done: Promise<unknown>;
}

export { selectionOf, toIpcError };

/**
 * Detection writes into the cache directory (the O_DIRECT probe file, and the drive probe's files):
 * a system directory, also one reached through a link, is refused before it runs. So is a file given
 * as the directory (or as one of its parents), which detection would only call "not writable".
 */
function refuseCacheDir(cacheDir: string): void {
  const refused = cacheDirProblem(cacheDir, 'the cache directory');
  if (refused) fail('VALIDATION', refused);
}

/**
 * Why a path the page gives cannot be used as a cache directory (`name` says which one), or null: a
 * relative path (the backend's working directory is not one the user knows: `kvbench serve` may have
 * been started anywhere, the app from a menu), a system directory, or a file. One that does not
 * exist yet is fine: a suite creates it.
 */
function cacheDirProblem(cacheDir: string, name: string): string | null {
  const relative = relativePathProblem(cacheDir, name);
  if (relative) return relative;
  const refused = systemDirectoryError(cacheDir, name);
  if (refused) return refused;
  const refusal = cacheDirRefusal(cacheDir);
  if (refusal?.kind !== 'not-a-directory') return null;
  // Its message names the directory as "the cache directory"; said of another one, it is prefixed with that one's name.
  return name === 'the cache directory' ? refusal.message : `${name}: ${refusal.message}`;
}

/** `${name} must be an absolute path …` for a relative `file`, else null. */
function relativePathProblem(file: string, name: string): string | null {
  return path.isAbsolute(file) ? null : `${name} must be an absolute path (starting with /): ${file} would be taken relative to the folder kvbench was started in`;
}

/** A database the page asks for: refused where it cannot be the app's database (databasePathRefusal). */
function refuseDatabasePath(file: string): void {
  const refused = databasePathRefusal(file);
  if (refused) fail('VALIDATION', refused);
}

/** How the app consents to a resume across changed metric definitions (suite.resume's acrossVersions). */
const APP_ACROSS_VERSIONS_CONSENT = "Resume it anyway from History, whose Resume asks you to confirm it";

/** What the app's user does about damage found after the open (a read, or the check before a write). */
const DAMAGE_FOUND_LATER =
  'The next time kvbench opens it (at its next start, or chosen again in Settings after another database), it shows a read-only copy of what can still be read; ' +
  'restore a backup, or recover it (kvbench recover).';

/** The app's databases are chosen in Settings: a refused open says so, not which CLI flag to use. */
const APP_STORE_OPTIONS: OpenStoreOptions = { chooseDatabase: 'in Settings', readersOfNewer: 'History, reports, Compare and exports' };

type Log = NonNullable<BackendOptions['log']>;

/**
 * The app's database as opened: read-write, or (damaged) a read-only copy in memory of what could be
 * read, or (`readOnly`: why writes are refused) a newer kvbench's file that this build may only read.
 */
type AppDatabase = OpenedStore & { damaged: DamagedDatabase | null; readOnly: string | null };

/**
 * A damaged database (PRAGMA quick_check fails) is read as the CLI's history, report and export read
 * it (openDamagedStore): its readable rows copied into memory, the file only read. Null where the file
 * is not one to read so (not SQLite, another application's, a newer kvbench's): its refusal stands.
 * The copy is made on a worker thread (seconds to minutes on a large database), so the backend
 * answers meanwhile; `say` hears its progress.
 */
async function openDamagedAppDatabase(file: string, log: Log, say: ((line: string) => void) | undefined, signal: AbortSignal | undefined): Promise<AppDatabase | null> {
  const reading = 'the file is damaged: reading what can still be read of it';
  say?.(reading);
  const salvaged = await openDamagedStoreOffThread(file, {
    ...APP_STORE_OPTIONS,
    ...(signal ? { signal } : {}),
    ...(say ? { onProgress: (message: string) => say(`${reading} (${message})`) } : {}),
  });
  if (salvaged === null) return null;
  const { store, damage, allPlaced } = salvaged;
  const trialsRead = store.trialFacets().trialCount;
  const lost = store.unreadable.length;
  log(
    'warn',
    `database ${file} is damaged (${damage}): showing a read-only copy of what could be read (${trialsRead} trial(s); ${lost === 0 ? (allPlaced ? 'every stored row read' : 'every row found read, but SQLite could not place all the damage') : `${lost} part(s) could not be read, each said next`}). Nothing is written to the file; suites, imports and deletes are refused until another database is chosen in Settings`,
  );
  return { store, recovered: [], unstored: [], removedRunDirs: [], damaged: { damage, allPlaced, unreadable: [...store.unreadable], trialsRead }, readOnly: null };
}

/**
 * Opens the app's database. A new one is made here (createDatabaseFile: readable by its owner only,
 * as openStore makes one for every other entry point), so that a file made for an open that then
 * fails is known and removed again. Its folder is created only where kvbench chose the place (the
 * user data directory); a database named through the API must be in a folder that exists, so a page
 * (or a token holder) cannot make folders anywhere this user may write.
 */
async function openAppDatabase(file: string, o: { createFolder: boolean; log: Log; onUpgrade?: (message: string) => void; signal?: AbortSignal }): Promise<AppDatabase> {
  const companions = ['-wal', '-shm'].filter((ext) => !fs.existsSync(`${file}${ext}`));
  let created = false;
  if (statOrNull(file) === null) {
    const folder = path.dirname(file);
    const st = statOrNull(folder);
    if (!o.createFolder && st === null) fail('VALIDATION', `the folder ${folder} does not exist: create it first, or choose a database in an existing folder`);
    if (st !== null && !st.isDirectory()) fail('VALIDATION', `${folder} is not a folder, so the database ${file} cannot be created in it`);
    if (st === null) fs.mkdirSync(folder, { recursive: true });
    try {
      created = createDatabaseFile(file);
    } catch {
      // Not writable here (or made meanwhile): the store's open says why, in its own words.
    }
  }
  try {
    // The once-only upgrade of many imported trials is said in the log, as the start-up's other
    // findings are (the app's window title shows it at the first open), and to `onUpgrade` (the page
    // that switched to this database): one line, the same words everywhere.
    const say = (line: string): void => {
      const message = `database ${file}: ${line}`;
      o.log('info', message);
      o.onUpgrade?.(message);
    };
    // The app writes (suites, imports, deletes), so it upgrades an older database when it opens it, as
    // a CLI command that writes does: said in the log, to the page that switched, and in app.info
    // (databaseNotes, shown as a notice) — which kvbench can no longer open it, where the old file is kept.
    const opened = await openStoreAndRecover(file, { ...APP_STORE_OPTIONS, skipCheckIfSound: true, onBackfill: backfillNotice(say) });
    for (const note of opened.store.openNotes) {
      o.log('warn', note);
      o.onUpgrade?.(note);
    }
    return { ...opened, damaged: null, readOnly: null };
  } catch (err) {
    if (created) for (const ext of ['', ...companions]) fs.rmSync(`${file}${ext}`, { force: true });
    const salvaged =
      !created && err instanceof StoreError && err.code === 'DB_CORRUPT'
        ? await openDamagedAppDatabase(file, o.log, o.onUpgrade && ((line) => o.onUpgrade?.(`database ${file}: ${line}`)), o.signal)
        : null;
    if (salvaged !== null) return salvaged;
    // A newer kvbench's database that records this build may read it is read read-only, as it is, as
    // the CLI's readers read it: writes are refused naming the kvbench they need (err's words). One
    // this build may not read is refused again by this open, and the first refusal stands.
    if (!created && err instanceof StoreError && err.code === 'DB_TOO_NEW') {
      let opened: OpenedStore;
      try {
        opened = await openStoreAndRecover(file, { ...APP_STORE_OPTIONS, keepSchema: true });
      } catch {
        throw err;
      }
      if (!opened.store.readonly) {
        opened.store.close();
        throw err;
      }
      for (const note of opened.store.openNotes) o.log('warn', note);
      return { ...opened, damaged: null, readOnly: err.message };
    }
    throw err;
  }
}


/**
 * A stored endpoint run as listed: without its aggregates and server metrics (a list of a thousand
 * runs would carry them all), with the values that may not be its own share named, as `endpoint
 * list` marks them.
 */
function endpointRow({ aggregates: _a, serverMetrics, ...r }: EndpointRunRecord): ResponseOf<'endpoint.list'>['runs'][number] {
  return { ...r, metricCaveats: serverMetricCaveats(serverMetrics) };
}

/** One stored run in full as `endpoint show` has it, but the pooled inter-token histogram, which only merging and the exports read. */
function endpointDetail(r: EndpointRunRecord): ResponseOf<'endpoint.get'>['run'] {
  const { itlHistogram: _h, ...aggregates } = r.aggregates;
  return { ...endpointRow(r), aggregates, serverMetrics: r.serverMetrics };
}

/** What the page lists of a failed request: which one, and why it failed. */
const failedRequest = ({ seq, requestId, batchIndex, contextTokens, status, httpStatus, error }: EndpointRequestSample): ResponseOf<'endpoint.get'>['failedRequests'][number] => ({
  seq,
  requestId,
  batchIndex,
  contextTokens,
  status,
  httpStatus,
  error,
});

/** Labels may hold `:` and `+`; file names keep to letters, digits, `.`, `_` and `-`. */
function fileNamePart(s: string): string {
  return s.replace(/[^A-Za-z0-9._-]+/g, '_');
}

/**
 * The name an uploaded file gets in the import's private directory: its position first, so every
 * upload has a name of its own there (two files named alike, or one named like another's prefixed
 * name, never overwrite each other) and `.` or `..` is a plain file name, never the directory or its
 * parent; zero-padded, so the names sort in upload order. Then the upload's own name, reduced to
 * safe characters and short enough for any file system.
 */
export function uploadFileName(index: number, count: number, name: string): string {
  const position = String(index + 1).padStart(String(count).length, '0');
  const own = path.basename(name).replace(/[^\w.+-]+/g, '_').slice(-200);
  return `${position}-${own || 'file.json'}`;
}

export async function createBackend(opts: BackendOptions): Promise<Backend> {
  const log = opts.log ?? (() => {});
  const detect: DetectFn = opts.detect ?? ((cacheDir, o) => detectForSuite(cacheDir, o));
  const loaded = loadSettings(opts.settingsFile, opts.defaults);
  for (const p of loaded.problems) log('warn', p.message);
  let settings: Settings = opts.databasePath ? { ...loaded.settings, databasePath: path.resolve(opts.databasePath) } : loaded.settings;
  let chosenSettings = loaded.chosen; // the file's valid settings: with unusedSettings, all a save writes
  let unusedSettings = loaded.unused; // the file's invalid or unknown keys, written back until replaced in Settings
  let settingsProblems = loaded.problems;
  // The file may name a database kvbench could not read: the default one is not opened in its place
  // (its history would pass for the user's), until --db or Settings names one.
  const databasePathProblem = opts.databasePath ? undefined : loaded.problems.find((p) => p.key === 'databasePath' || p.key === null);
  let databasePathUnknown = databasePathProblem !== undefined;
  /**
   * Why the default cache directory in the settings would be refused if it were saved now (as
   * updateSettings refuses one), or null. An older kvbench saved any, and a folder may since have
   * become a file; so it is checked at the start and at each app.info. It is kept as saved (the user
   * replaces it in Settings) and still suggested, so the wizard's field shows it with why.
   */
  const defaultCacheDirProblem = (): string | null => (settings.defaultCacheDir ? cacheDirProblem(settings.defaultCacheDir, 'the default cache directory') : null);
  const savedDefaultRefused = defaultCacheDirProblem();
  if (savedDefaultRefused !== null) {
    log('warn', `the settings file ${opts.settingsFile} holds a default cache directory Settings would refuse now: ${savedDefaultRefused}. It is kept as saved (the wizard offers it, and refuses it): choose another in Settings`);
  }

  /** Aborted by close(): the worker threads reading or recovering a damaged database stop with it. */
  const closing = new AbortController();
  let store: Store | null = null;
  let databaseError: IpcError | null = null;
  /** A recovery of the damaged database under way (database.recover, on a worker thread): where to, and its newest step. */
  let recovering: { outPath: string; message: string } | null = null;
  /** The open database is damaged: `store` is a read-only copy of what could be read, and nothing writes (refuseDamaged). */
  let damaged: DamagedDatabase | null = null;
  /** The open database is a newer kvbench's, read as it is: why nothing writes to it (refuseDamaged), else null. */
  let readOnly: string | null = null;
  if (databasePathProblem) {
    databaseError = { code: 'VALIDATION', message: databasePathProblem.message };
  } else {
    try {
      const opened = await openAppDatabase(settings.databasePath, { createFolder: true, log, signal: closing.signal });
      store = opened.store;
      damaged = opened.damaged;
      readOnly = opened.readOnly;
      for (const r of opened.recovered) log('warn', `trial ${r.trialId} (${r.scenarioId}, suite ${r.suiteId}) was interrupted when its runner died; marked aborted`);
      for (const u of opened.unstored) {
        log('warn', `trial ${u.trialId} (${u.scenarioId}, suite ${u.suiteId}) finished, but its runner could not store it; marked failed: its results are in ${u.file}`);
      }
    } catch (err) {
      databaseError = toIpcError(err);
      log('error', `database ${settings.databasePath}: ${databaseError.message}`);
    }
  }

  // Rows a read had to leave out (damaged stored JSON: Store.unreadable), said once each in the log,
  // as the CLI says them on stderr; the answers that lack them say so too (Store.readDamaged). By
  // text, not by count: a snapshot's line grows as later reads find more of its trials, and is said
  // again then, naming them all.
  const unreadableLogged = new WeakMap<Store, Set<string>>();
  const logUnreadable = (met: readonly string[] = []): void => {
    if (store === null) return;
    let said = unreadableLogged.get(store);
    if (!said) unreadableLogged.set(store, (said = new Set()));
    // `met`: what a worker thread's own connection met (a report's), said as this store's own are.
    for (const m of [...store.unreadable, ...met]) {
      if (said.has(m)) continue;
      said.add(m);
      log('warn', m);
    }
  };
  logUnreadable(); // what the copy of a damaged database could not read, with its open's line

  const listeners = new Set<(event: AppEvent) => void>();
  const emit = (event: AppEvent): void => {
    if (run) {
      if (event.type === 'suite.trialProgressed') {
        run.progressCount += 1;
        // Keep every trial event, and only the newest progress events.
        if (run.progressCount > PROGRESS_KEPT) {
          const i = run.events.findIndex((e) => e.type === 'suite.trialProgressed');
          if (i >= 0) run.events.splice(i, 1);
        }
      }
      if (event.type.startsWith('suite.')) run.events.push(event);
    }
    for (const l of listeners) {
      try {
        l(event);
      } catch (err) {
        log('warn', `event listener failed: ${(err as Error).message}`);
      }
    }
  };

  let run: ActiveRun | null = null;
  /**
   * Settings changes one at a time: a database switch waits for its open, which may upgrade the file
   * for seconds (the event loop turning meanwhile), and a change that came in then builds on its result.
   */
  let settingsQueue: Promise<unknown> = Promise.resolve();
  /** Another database is being opened (Settings): no suite starts, and nothing is written, on the one about to be closed. */
  let switchingTo: string | null = null;
  /** Writes under way on the open database (imports span many turns of the event loop): it is closed only after them. */
  const writes = new Set<Promise<unknown>>();
  const detections = new Map<string, { at: number; hw: HardwareProfile }>();

  const requireStore = (): Store => {
    if (store) return store;
    if (!databaseError) fail('NOT_FOUND', 'no database is open. Choose a database in Settings.');
    // The open's own message is whole sentences, most of them already saying where to choose another.
    const why = databaseError.message.trim();
    const choose = /in Settings\.?$/.test(why) ? '' : ' Choose a database in Settings.';
    fail(databaseError.code, `no database is open: ${why.replace(/\.$/, '')}.${choose}`);
  };

  /**
   * Refuses `what` (a write: a suite, an import, a delete) while the open database is damaged: what
   * the app shows is a copy in memory, and the file itself is never written. The open skips PRAGMA
   * quick_check on a file exactly as a check found it sound: the check is made here, before the first write.
   */
  const refuseDamaged = (what: string): void => {
    if (readOnly !== null && store !== null) fail('DB_TOO_NEW', `${what} is refused: ${readOnly}`);
    if (damaged === null && store !== null) {
      try {
        store.checkBeforeWriting();
      } catch (err) {
        if (err instanceof StoreError && err.code === 'DB_REPLACED') fail(err.code, `${what} is refused: ${err.message}`);
        if (err instanceof StoreError) fail(err.code, `${what} is refused: ${err.message.replace(/\.$/, '')}. ${DAMAGE_FOUND_LATER}`);
        throw err;
      }
    }
    if (damaged === null || store === null) return;
    fail(
      'DB_CORRUPT',
      `${what} is refused: the database ${store.path} is damaged, and kvbench shows a read-only copy of what could be read, writing nothing to the file. ` +
        'To run suites, import or delete again, choose a new (or a healthy) database in Settings.',
    );
  };

  /**
   * A write to the open database (an import, a delete), `what` in the words of its refusal. Refused
   * where the database is damaged (refuseDamaged), and while another database is being opened: it
   * would land in the one being left, which the page no longer shows. One under way when a switch
   * starts ends on the database it started on; the switch closes that one after it.
   */
  const writing = async <T>(what: string, refusal: string, write: (s: Store) => Promise<T>): Promise<T> => {
    if (switchingTo !== null) fail('BUSY', `the database ${switchingTo} is being opened (Settings): ${refusal}`);
    refuseDamaged(what);
    const done = write(requireStore());
    writes.add(done);
    try {
      return await done;
    } finally {
      writes.delete(done);
    }
  };
  const DELETE_REFUSED = 'nothing is deleted from the database it replaces';

  /**
   * The open database's file replaced at its path (mv, rsync, a restore tool), looked for every few
   * seconds as well as before each report and write: seen, the connection empties its -wal into the
   * file it has open (Store.replacedError), so that the file now at the path is read as it came, by
   * this kvbench once chosen again and by any other program meanwhile; and the log says it once.
   */
  let replacedSaid: Store | null = null;
  const lookForReplaced = (): void => {
    if (store === null || store === replacedSaid) return;
    const replaced = store.replacedError();
    if (replaced === null) return;
    replacedSaid = store;
    log('warn', replaced.message);
  };
  const replacedWatch = setInterval(lookForReplaced, REPLACED_LOOK_MS);
  replacedWatch.unref();

  /** Stops the reports and exports reading the open database on worker threads: aborted (with why) when another is opened. */
  let readersStop = new AbortController();
  /** Reports and exports under way on worker threads: the database they read is closed only after them. */
  const offThread = new Set<Promise<unknown>>();
  const reportWorkers = new ReportWorkers(REPORT_WORKER_LANES);

  /**
   * A report, comparison or export (report-jobs.ts), built on a worker thread with its own read-only
   * connection (report-thread.ts), so that every other request, and a running suite's events, are
   * answered meanwhile. The answer is the one this thread would build, or its refusal.
   */
  const reportJob = async <C extends ReportChannel>(job: Extract<ReportJob, { channel: C }>): Promise<ReportAnswer<C>> => {
    const s = requireStore();
    // A damaged database is shown from a copy in memory (openDamagedStore), which another thread
    // cannot open (it would need the whole copy serialized and copied again for every report, and
    // the file itself is what is damaged): its reports are built here, on this thread, as before.
    if (damaged !== null) return (await answerReportJob(s, job)) as ReportAnswer<C>;
    // Another file at the path than the one History reads (replaced by a rename): refused, DB_REPLACED,
    // rather than a report of another database than History's. One moved away is read here (below).
    if (s.pathNow() === 'replaced') s.requireSameFile();
    const signal = AbortSignal.any([readersStop.signal, closing.signal]); // this database's, taken now: a switch while it waits its turn stops it
    const done: Promise<ReportAnswer | null> = reportWorkers.answer(s.path, job as ReportJob, { signal, chooseDatabase: APP_STORE_OPTIONS.chooseDatabase, sameFileAs: s.fileIdentity });
    offThread.add(done);
    let answer: ReportAnswer | null;
    try {
      answer = await done;
    } finally {
      offThread.delete(done);
    }
    // Read from a database the page no longer shows: refused, whatever the worker answered.
    if (store !== s) throw stoppedError(job.channel, switchedAway(store?.path ?? settings.databasePath));
    // The worker could not open the file (moved, or its mode changed, since the backend opened it): this thread's connection still reads it.
    if (answer === null) return (await answerReportJob(s, job)) as ReportAnswer<C>;
    logUnreadable(answer.unreadable);
    return answer as ReportAnswer<C>;
  };

  const downloads = opts.downloads ?? new ExportDownloads();
  /**
   * export.create: the file written where it goes (report-jobs.ts, on a worker thread), never held
   * here. The desktop app asks where first (its save dialog) and writes there; kvbench serve writes a
   * private temporary file and answers a one-time URL the page downloads it from (export-downloads.ts).
   */
  const createExport = (request: ParsedRequestOf<'export.create'>): Promise<ResponseOf<'export.create'>> => {
    // Waited for by close() from the start (a save dialog open, the private folder being made), so
    // that no part of the file outlives it.
    const done = writeExport(request);
    offThread.add(done);
    return done.finally(() => offThread.delete(done));
  };
  const writeExport = async (request: ParsedRequestOf<'export.create'>): Promise<ResponseOf<'export.create'>> => {
    const fileName = storageExportFileName(request);
    const s = requireStore();
    let file: AtomicFile;
    if (opts.chooseExportFile) {
      const chosen = await opts.chooseExportFile(fileName);
      if (chosen === null) return { dismissed: true };
      const overwritesDb = databaseOutputError('the file', chosen, s.path);
      if (overwritesDb !== null) fail('VALIDATION', overwritesDb);
      // Before the export is read and made: a folder gone or not writable costs nothing.
      const problem = outputFileProblem(chosen);
      if (problem !== null) throw Object.assign(new Error(`export failed: could not write ${chosen}: ${problem}`), { code: 'EXPORT_FAILED' });
      try {
        file = atomicFileOf(chosen);
      } catch (err) {
        throw Object.assign(new Error(`export failed: could not write ${chosen}: ${(err as FileWriteError).message}`), { code: 'EXPORT_FAILED' });
      }
    } else {
      try {
        file = atomicFileOf(await downloads.newFile(request.format));
      } catch (err) {
        throw Object.assign(new Error(`export failed: no temporary file could be made for it in ${os.tmpdir()}: ${(err as Error).message}`), { code: 'EXPORT_FAILED' });
      }
    }
    if (closing.signal.aborted) throw stoppedError('export.create', String(closing.signal.reason));
    let written: ReportAnswer<'export.create'>;
    try {
      written = await reportJob({ channel: 'export.create', request, file });
      await commitAtomicFile(file);
    } catch (err) {
      // A worker that did not answer has exited (report-thread.ts): nothing writes the temporary now.
      await abandonAtomicFile(file);
      if (err instanceof FileWriteError) throw Object.assign(new Error(`export failed: could not write ${file.file}: ${err.message}`), { code: 'EXPORT_FAILED' });
      throw err;
    }
    const offered: OfferedDownload = { file: file.target, fileName, mimeType: EXPORT_MIME_TYPES[request.format], bytes: written.bytes };
    const delivery = opts.chooseExportFile ? { kind: 'saved' as const, path: file.file } : { kind: 'download' as const, url: `${HTTP_DOWNLOAD_PREFIX}${downloads.offer(offered)}` };
    return { fileName, mimeType: offered.mimeType, bytes: written.bytes, trialCount: written.trialCount, unreadable: written.unreadable, delivery };
  };
  /** Stops the reports and exports reading the open database (another is being opened), `reason` saying why. */
  const stopReaders = (reason: string): void => {
    readersStop.abort(reason);
    readersStop = new AbortController();
  };

  const detectCached = async (cacheDir: string): Promise<HardwareProfile> => {
    const hit = detections.get(cacheDir);
    if (hit && performance.now() - hit.at < DETECT_REUSE_MS) return hit.hw;
    const hw = await detect(cacheDir, { probe: false, profile: 'smoke' });
    detections.set(cacheDir, { at: performance.now(), hw });
    return hw;
  };

  const planOptions = (r: PlanRequest, cacheDir: string): PlanOptions => ({
    profile: r.profile,
    cacheDir,
    ...(r.trials !== undefined ? { trials: r.trials } : {}),
    ...(r.model ? { model: r.model } : {}),
    ...(r.scenarios ? { scenarios: r.scenarios } : {}),
    ...(r.extras !== undefined ? { extras: r.extras } : {}),
    ...(r.durationS !== undefined ? { durationS: r.durationS } : {}),
    ...(r.warmUpS !== undefined ? { warmUpS: r.warmUpS } : {}),
    ...(r.maxRequests !== undefined ? { maxRequests: r.maxRequests } : {}),
    ...(r.storageCapacityGib !== undefined ? { storageCapacityGb: r.storageCapacityGib } : {}),
    probe: r.probe ?? true, // as launch() detects: recorded, so a resume (here or by the CLI) chooses the same
  });

  /**
   * Why no suite may start now (another runs or is being prepared, a database switch is under way, the
   * database is damaged or a newer kvbench's): said before anything about the suite itself, which
   * would send the user to a step (a confirmation) that the next refusal makes pointless.
   */
  const refuseLaunch = (resumeId: number | null): void => {
    if (run) fail('BUSY', run.suiteId !== null ? `suite ${run.suiteId} is running; cancel it or wait for it to finish` : 'a suite is being prepared');
    if (switchingTo !== null) fail('BUSY', `the database ${switchingTo} is being opened (Settings): start the suite once it is open`);
    refuseDamaged(resumeId === null ? 'A new suite' : `Resuming suite ${resumeId}`);
  };

  /** Runs a suite (new or resumed) in the background; resolves with its id once it exists. */
  const launch = async (request: PlanRequest, label: string | null, resumeId: number | null, resume: ResumeOptions = {}): Promise<{ suiteId: number }> => {
    refuseLaunch(resumeId);
    const s = requireStore();
    const controller = new AbortController();
    const active: ActiveRun = {
      state: 'preparing',
      request,
      plan: null,
      suiteId: null,
      startedAt: new Date().toISOString(),
      controller,
      events: [],
      progressCount: 0,
      done: Promise.resolve(),
    };
    run = active;
    let suiteStarted!: (id: number) => void;
    const started = new Promise<number>((resolve) => (suiteStarted = resolve));
    let launched = false;
    // The cache directory levels this start created: removed again, where empty, when the suite ends
    // (however it ends, as when it ends before it started); a resume creates them again.
    let created: { dir: string; from: string | undefined } | null = null;
    const onEvent = (e: SuiteEvent): void => {
      if (e.type === 'suite.started') {
        active.suiteId = e.suiteId;
        suiteStarted(e.suiteId);
      }
      emit(e);
      if (e.type === 'suite.trialFinished') emit({ type: 'history.changed', reason: `trial ${e.trialId} finished` });
    };
    try {
      // Refused before anything is created: a relative path, a system directory (also behind a link), a file, or a bad option.
      refuseCacheDir(request.cacheDir); // for a resume too: a stored plan's directory may be a link that now leads elsewhere
      const cacheDir = path.resolve(request.cacheDir);
      if (resumeId === null) {
        const problems = planOptionErrors(planOptions(request, cacheDir));
        if (problems.length > 0) fail('VALIDATION', problems.join('\n'));
      }
      try {
        created = { dir: cacheDir, from: await fsp.mkdir(cacheDir, { recursive: true }) };
      } catch (err) {
        fail('TARGET_NOT_WRITABLE', `cannot create the cache directory ${cacheDir}: ${(err as Error).message}`);
      }
      const probe = request.probe ?? true;
      emit({ type: 'suite.preparationProgressed', step: probe ? 'probing' : 'detecting', message: probe ? `Detecting hardware and probing the drive behind ${cacheDir} …` : 'Detecting hardware …' });
      // The GPU copy probe only for a suite with a GPU tier in it: a resumed one's stored plan, a new one's chosen scenarios.
      const stored = resumeId !== null ? s.getSuitePlan(resumeId) : null;
      const gpuScenarios = stored !== null ? planUsesGpu(stored) : scenariosUseGpu(chosenScenarioIds(planOptions(request, cacheDir)));
      const hardware = await detect(cacheDir, { probe, profile: request.profile, signal: controller.signal, gpuScenarios });
      if (controller.signal.aborted) fail('CANCELLED', 'cancelled before the first trial');
      let result: Promise<SuiteRunResult>;
      const deps = {
        store: s,
        hardware,
        onEvent,
        signal: controller.signal,
        ...(opts.startEngine ? { startEngine: opts.startEngine } : {}),
        ...(opts.cancelGraceMs !== undefined ? { cancelGraceMs: opts.cancelGraceMs } : {}),
      };
      if (resumeId !== null) {
        active.plan = s.getSuitePlan(resumeId);
        active.state = 'running';
        result = resumeSuite(resumeId, { ...deps, ...resume, consent: APP_ACROSS_VERSIONS_CONSENT });
      } else {
        emit({ type: 'suite.preparationProgressed', step: 'planning', message: 'Planning the suite …' });
        const plan = planSuite(hardware, planOptions(request, cacheDir));
        if (!plan.estimate.fits) fail('INSUFFICIENT_SPACE', plan.estimate.problems.join('\n'));
        active.plan = plan;
        active.state = 'running';
        result = runSuite(plan, { ...deps, label });
      }
      active.done = result
        .then(
          (r) => {
            emit({ type: 'history.changed', reason: `suite ${r.suiteId} ${r.status}` });
          },
          (err) => {
            emit({ type: 'suite.failed', suiteId: active.suiteId, error: toIpcError(err) });
            emit({ type: 'history.changed', reason: 'suite failed' });
          },
        )
        // Before the backend takes another start, which may name the same directory.
        .finally(() => (created !== null ? removeCreatedDirs(created.dir, created.from) : undefined));
      launched = true;
      void active.done.finally(() => {
        if (run === active) run = null;
      });
      const suiteId = await Promise.race([started, result.then((r) => r.suiteId)]);
      return { suiteId };
    } catch (err) {
      // Once the runner has started, its own failure is reported by `done`.
      if (!launched) {
        // Refused, cancelled or failed before the suite started: as with the CLI, nothing of it is left.
        if (created !== null) await removeCreatedDirs(created.dir, created.from);
        if (run === active) run = null;
        emit({ type: 'suite.failed', suiteId: active.suiteId, error: toIpcError(err) });
      }
      throw err;
    }
  };

  // Endpoint runs are recorded by `kvbench endpoint run` (the CLI, possibly another process on the
  // same database); the app lists, shows, compares and exports them through the CLI's own services.
  const endpointStore = (): EndpointStore => new EndpointStore(requireStore());

  /** This machine's last suite's cache directory; null without one, or without a readable database (the page then offers the temp directory). */
  const lastCacheDir = (): string | null => {
    try {
      return store?.lastSuiteCacheDir(os.hostname()) ?? null;
    } catch {
      return null;
    }
  };

  /** settings.update, one at a time (settingsQueue). */
  const updateSettings = async ({ createDatabase, ...patch }: ParsedRequestOf<'settings.update'>): Promise<Settings> => {
    if (loaded.saveRefused !== null) fail('VALIDATION', loaded.saveRefused);
    // Checked before a database is opened, so that a refused change leaves the database as it was too.
    if (patch.defaultCacheDir) {
      const refused = cacheDirProblem(patch.defaultCacheDir, 'the default cache directory');
      if (refused) fail('VALIDATION', refused);
    }
    const next: Settings = { ...settings, ...patch };
    if (patch.databasePath !== undefined) {
      const relative = relativePathProblem(patch.databasePath, 'the database');
      if (relative) fail('VALIDATION', relative);
      next.databasePath = path.resolve(patch.databasePath); // normalised (a/../b)
    }
    if (next.databasePath !== settings.databasePath) refuseDatabasePath(next.databasePath);
    // A failed database is retried on any save, but one the settings file names unreadably only when a
    // database is given: a change of units must not open the default one in its place.
    // The open database's file replaced at its path (DB_REPLACED): choosing the same path again opens the file now there.
    const reopenReplaced = patch.databasePath !== undefined && next.databasePath === settings.databasePath && store !== null && store.pathNow() !== 'same';
    if (next.databasePath !== settings.databasePath || reopenReplaced || (databaseError !== null && (!databasePathUnknown || patch.databasePath !== undefined))) {
      if (run) fail('BUSY', 'a suite is running: change the database after it has finished');
      const databasePath = next.databasePath;
      // A new database's history is empty: a misspelt path would show no trials, unexplained. So one is
      // created only when the page says the user asked for it (it asks on this answer); where one cannot
      // be created (no such folder), the open says so first.
      if (!createDatabase && statOrNull(databasePath) === null && statOrNull(path.dirname(databasePath))?.isDirectory()) fail('NOT_FOUND', `no database exists at ${databasePath}: switching to it creates a new, empty one`);
      switchingTo = databasePath;
      if (reopenReplaced && store !== null) {
        // The connection to the replaced file is closed first: its -wal and -shm lie at the path, and a
        // second connection opened there would take them for the new file's. Closing as the last one,
        // SQLite checkpoints them into the file it had open and removes them.
        const replaced = store.replacedError();
        await Promise.allSettled([...writes]);
        stopReaders(switchedAway(databasePath));
        await Promise.allSettled([...offThread]);
        store.close();
        store = null;
        databaseError = replaced === null ? null : toIpcError(replaced);
      }
      let opened: AppDatabase;
      try {
        // Throws when it cannot be used. A switch to another path keeps the old database open then; a
        // replaced one's has been closed already (above: keeping it open beside the new file is what
        // would corrupt it, and its file is no longer at the path), so none is left, and the answer and
        // every later reader say so. Its once-only upgrade (seconds for thousands of imported trials)
        // is told to the page as it goes.
        try {
          opened = await openAppDatabase(databasePath, {
            createFolder: false,
            log,
            onUpgrade: (message) => emit({ type: 'database.upgradeProgressed', databasePath, message }),
            signal: closing.signal,
          });
        } catch (err) {
          if (!reopenReplaced) throw err;
          const why = toIpcError(err);
          databaseError = {
            code: why.code,
            message: `the file now at ${databasePath} cannot be opened: ${why.message.trim().replace(/\.$/, '')}; the database kvbench had open there was closed (its file was replaced), so no database is open now. Choose a database in Settings.`,
          };
          log('error', `database ${databasePath}: ${databaseError.message}`);
          fail(databaseError.code, databaseError.message);
        }
        // An import under way on the old database ends there: closed under it, it would fail half-way.
        await Promise.allSettled([...writes]);
        // Reports and exports still reading it are stopped (their answers would be of a database the page no longer shows).
        stopReaders(switchedAway(databasePath));
        await Promise.allSettled([...offThread]);
      } finally {
        switchingTo = null;
      }
      store?.close();
      store = opened.store;
      damaged = opened.damaged;
      readOnly = opened.readOnly;
      databaseError = null;
      logUnreadable();
      databasePathUnknown = false;
    }
    const chosen = { ...chosenSettings, ...patch, ...(patch.databasePath !== undefined ? { databasePath: next.databasePath } : {}) };
    const replaced = (key: string | null): boolean => key !== null && Object.hasOwn(patch, key);
    const unused = Object.fromEntries(Object.entries(unusedSettings).filter(([key]) => !replaced(key)));
    await saveSettings(opts.settingsFile, chosen, unused);
    chosenSettings = chosen;
    unusedSettings = unused;
    settingsProblems = settingsProblems.filter((p) => !replaced(p.key));
    settings = next;
    emit({ type: 'settings.changed', settings });
    emit({ type: 'history.changed', reason: 'settings changed' });
    return settings;
  };

  const handlers: Handlers = {
    async 'app.info'() {
      return {
        version: KVBENCH_VERSION,
        mode: opts.mode,
        platform: `${os.platform()} ${os.arch()}`,
        hostname: os.hostname(),
        databasePath: settings.databasePath,
        databaseError,
        databaseDamaged: damaged,
        databaseRecovering: recovering,
        databaseReadOnly: readOnly,
        // A database `kvbench recover` made says so every time it is opened, with what was lost. A newer
        // kvbench's file read as it is has its open's note said by the lasting read-only notice
        // (databaseReadOnly names the same kvbench and schema), not a second time here.
        databaseNotes: [...(readOnly === null ? (store?.openNotes ?? []) : []), ...(store?.recovery ? [recoveryNotice(store.path, store.recovery)] : [])],
        settingsFile: opts.settingsFile,
        settings,
        settingsProblems: settingsProblems.map((p) => p.message),
        defaultCacheDirProblem: defaultCacheDirProblem(),
        suggestedCacheDir: settings.defaultCacheDir || lastCacheDir() || path.join(os.tmpdir(), 'kvbench-cache'),
        models: availableModelNames(),
        defaultModel: DEFAULT_MODEL_KEY,
        engineHasGpuTier: ENGINE_HAS_GPU_TIER,
      };
    },

    async 'settings.get'() {
      return settings;
    },

    async 'settings.update'(patch) {
      const update = settingsQueue.then(() => updateSettings(patch));
      settingsQueue = update.catch(() => undefined);
      return update;
    },

    async 'database.recover'({ outPath }) {
      // In the settings queue: the switch to the new database is a Settings change like any other.
      const recover = settingsQueue.then(async () => {
        if (damaged === null || store === null) fail('VALIDATION', 'the open database is not damaged: there is nothing to recover (to copy it, close kvbench and copy the file)');
        const relative = relativePathProblem(outPath, 'the new database');
        if (relative) fail('VALIDATION', relative);
        const out = path.resolve(outPath);
        refuseDatabasePath(out);
        if (run) fail('BUSY', 'a suite is running');
        const from = store.path;
        // On a worker thread (a large database takes minutes): every other request answers meanwhile,
        // reading the damaged copy as before, and app.info and the page's events say how far it is.
        const progressed = (message: string): void => {
          recovering = { outPath: out, message };
          emit({ type: 'database.recoveryProgressed', databasePath: from, outPath: out, message, ended: false });
        };
        progressed('starting');
        let recovery: Recovery;
        try {
          recovery = await recoverDatabaseOffThread(from, out, { ...APP_STORE_OPTIONS, signal: closing.signal, onProgress: progressed });
        } catch (err) {
          recovering = null;
          emit({ type: 'database.recoveryProgressed', databasePath: from, outPath: out, message: `stopped: ${toIpcError(err).message}`, ended: true });
          throw err;
        }
        recovering = null;
        log(
          recovery.lost.length === 0 ? 'info' : 'warn',
          `recovered the damaged ${from} into ${out}: ${recovery.trials} trial(s)${recovery.lost.length === 0 ? ', nothing lost' : `; could not be read: ${recovery.lost.join('; ')}`}`,
        );
        let switched: Settings;
        try {
          switched = await updateSettings({ databasePath: out });
        } catch (err) {
          // Written and checked, but not switched to (or the settings file not saved): not 'done'.
          emit({ type: 'database.recoveryProgressed', databasePath: from, outPath: out, message: `stopped: ${out} was written, but switching to it failed: ${toIpcError(err).message}`, ended: true });
          throw err;
        }
        emit({ type: 'database.recoveryProgressed', databasePath: from, outPath: out, message: 'done', ended: true });
        return { settings: switched, recovery };
      });
      settingsQueue = recover.catch(() => undefined);
      return recover;
    },

    async 'hardware.detect'(r) {
      refuseCacheDir(r.cacheDir);
      const cacheDir = path.resolve(r.cacheDir);
      // The drive and memory-copy probes saturate the drive and memory for seconds: under a suite (its own
      // probe, or its trials) they would disturb what it measures. Plain detection (system files, one
      // small direct-I/O test file) stays allowed, for a second tab or the plan form.
      if (r.probe && run) fail('BUSY', 'a suite is running: probe the drive after it has finished (detection without the probe is allowed)');
      const hw = await detect(cacheDir, { probe: r.probe ?? false, profile: 'smoke' });
      detections.set(cacheDir, { at: performance.now(), hw });
      return { hardware: hw, advice: hardwareAdvice(hw, ENGINE_HAS_GPU_TIER) };
    },

    async 'suite.plan'(r) {
      refuseCacheDir(r.cacheDir);
      const cacheDir = path.resolve(r.cacheDir);
      const hw = await detectCached(cacheDir);
      return { plan: planSuite(hw, planOptions(r, cacheDir)), hardware: hw, advice: hardwareAdvice(hw, ENGINE_HAS_GPU_TIER) };
    },

    async 'suite.start'(r) {
      const { label, ...request } = r;
      return launch(request, label ?? null, null);
    },

    async 'suite.resume'(r) {
      refuseLaunch(r.suiteId);
      const s = requireStore();
      const plan = s.getSuitePlan(r.suiteId);
      if (!plan) fail('NOT_FOUND', `suite ${r.suiteId} has no stored plan (imported results cannot be resumed)`);
      // As the CLI's --resume (--rerun-deleted, --across-versions): refused before anything is prepared where metric
      // definitions differ and there are trials to run, unless confirmed; the drive is probed only if the suite was
      // planned with the probe and has trials to run.
      const resume = { rerunDeleted: r.rerunDeleted === true, acrossVersions: r.acrossVersions === true };
      const { probe, trialsLeft } = resumeProbe(s, r.suiteId, plan, resume);
      const refusal = resumeRefusalFor(s, r.suiteId, { acrossVersions: r.acrossVersions === true, trialsToRun: trialsLeft, consent: APP_ACROSS_VERSIONS_CONSENT });
      if (refusal !== null) fail('VALIDATION', refusal);
      return launch({ cacheDir: plan.cacheDir, profile: plan.profile, probe }, null, r.suiteId, resume);
    },

    async 'suite.resumeCheck'(r) {
      const v = resumeVersions(requireStore(), r.suiteId);
      if (v === null) fail('NOT_FOUND', `suite ${r.suiteId} not found`);
      return { startedBy: v.startedBy, measuredBy: v.measuredBy, now: v.now, changes: v.changes.map(({ metric, since, change }) => ({ metric, since, change })), text: resumeVersionsText(v), needsConsent: v.changes.length > 0 };
    },

    async 'suite.cancel'() {
      if (!run) return { cancelled: false };
      run.controller.abort();
      return { cancelled: true };
    },

    async 'suite.status'() {
      if (!run) return { state: 'idle', suiteId: null, request: null, plan: null, startedAt: null, events: [] };
      return {
        state: run.state,
        suiteId: run.suiteId,
        request: run.request,
        plan: run.plan,
        startedAt: run.startedAt,
        events: run.events,
      };
    },

    async 'history.list'(r) {
      const s = requireStore();
      const offset = r.offset ?? 0;
      const limit = r.limit ?? 100;
      // The page in SQL; where SQLite and JSON.parse disagree about a damaged row, every trial of the selection read and sorted here, as always.
      const { value: listed, unreadable } = s.readDamaged(() => {
        const filter = filterOf(s, r.selection);
        return s.historyPage(filter, r.sort, offset, limit) ?? historyPageInMemory(s.listTrials({ ...filter, order: 'desc' }), r.sort, offset, limit);
      });
      const { trials: page, total } = listed;
      // The flags of the page's trials, from the rule the report, the CLI's `!` and the exports use.
      const cautions = page.map((t) => ({ trialId: t.id, messages: cautionsOf(t).map((c) => c.message) })).filter((c) => c.messages.length > 0);
      return { trials: page, total, cautions, unreadable };
    },

    async 'history.ids'(r) {
      const s = requireStore();
      // What History lists under the selection, every page of it ("select all matching"): ids only.
      const rows = s.historyIds(filterOf(s, r.selection));
      return { trialIds: rows.map((t) => t.id), suiteIds: [...new Set(rows.map((t) => t.suiteId))].sort((a, b) => a - b) };
    },

    async 'history.facets'(r) {
      const s = requireStore();
      const all = { systems: s.listSystems(), drives: s.listDrives(), ...s.trialFacets() };
      if (!r.selection) return all;
      // What is not a filter with values to choose (dates, suites) narrows the trials; SQL counts them by their values (no trial is loaded).
      const filter = filterOf(s, r.selection);
      return { ...all, matching: countFacetGroups(s.facetGroups(filter), filter) };
    },

    async 'trials.get'(r) {
      const s = requireStore();
      const trial = s.getTrial(r.id);
      if (!trial) fail('NOT_FOUND', `no trial ${r.id}`);
      // A damaged snapshot leaves the trial without its hardware: the dialog says so, as the lists do.
      const { value: hardware, unreadable } = s.readDamaged(() => s.trialHardware(r.id));
      // Its engine's memory and queueing verdict come from its stored results (one trial's, read whole);
      // damaged results leave the dialog without them, and say so.
      let engine: TrialEngine | null = null;
      let gpu: TrialGpu | null = null;
      try {
        const results = s.trialResults(r.id);
        // The queueing verdict is the stored trial's (its queueing_bound metric, the flag's source), the results' own kept beside it.
        engine = results === null ? null : withStoredVerdict(trialEngineOf(results), trial.metrics);
        gpu = results === null ? null : trialGpuOf(results);
      } catch (err) {
        if (!(err instanceof StoreError)) throw err;
        unreadable.push(err.message);
      }
      return {
        trial,
        hardware,
        histograms: s.trialHistograms(r.id).map((h) => ({ name: h.name, unit: h.unit, count: h.count })),
        cautions: cautionsOf(trial).map((c) => c.message),
        unreadable,
        engine,
        gpu,
      };
    },

    async 'trials.delete'(r) {
      return writing('Deleting trials', DELETE_REFUSED, async (s) => {
        // One transaction: all of them go, or (one missing or running) none does.
        const emptied = s.atomically(() => {
          for (const id of r.ids) {
            const t = s.getTrial(id);
            if (!t) fail('NOT_FOUND', `no trial ${id}`);
            if (t.status === 'running') fail('BUSY', `trial ${id} is running; cancel its suite first`);
          }
          return s.deleteTrials(r.ids);
        });
        emit({ type: 'history.changed', reason: `${r.ids.length} trial(s) deleted${emptied.length > 0 ? `, and suite(s) ${emptied.join(', ')} with them (no trial left)` : ''}` });
        return { deleted: r.ids.length };
      });
    },

    async 'suites.list'(r) {
      const s = requireStore();
      return s.listSuites({ ...(r.systemIds ? { systemIds: r.systemIds } : {}), limit: r.limit ?? 500 });
    },

    async 'suites.delete'(r) {
      return writing('Deleting a suite', DELETE_REFUSED, async (s) => {
        if (run && run.suiteId === r.id) fail('BUSY', `suite ${r.id} is running; cancel it first`);
        const suite = s.getSuite(r.id);
        if (!suite) fail('NOT_FOUND', `no suite ${r.id}`);
        if (suite.trialCounts.running > 0) fail('BUSY', `suite ${r.id} has a running trial (another kvbench process runs it)`);
        s.deleteSuite(r.id);
        emit({ type: 'history.changed', reason: `suite ${r.id} deleted` });
        return { deleted: true as const };
      });
    },

    async 'report.build'(request) {
      return reportJob({ channel: 'report.build', request });
    },

    async 'report.compare'(request) {
      return reportJob({ channel: 'report.compare', request });
    },

    async 'export.create'(request) {
      return createExport(request);
    },

    async 'import.results'(r) {
      return writing('An import', 'import the files once it is open', async (s) => {
        const scenarioId = r.scenarioId ?? 'imported';
        if (scenarioId !== 'imported' && !isScenarioId(scenarioId)) fail('VALIDATION', `unknown scenario '${shownInput(scenarioId)}'`);
        let runFlags: { options: Record<string, unknown>; given: string[] } | null = null;
        if (r.runFlags && r.runFlags.trim() !== '') {
          const parsed = parseImportRunFlags(r.runFlags);
          if (!parsed.ok) fail('VALIDATION', `run flags: ${parsed.errors.join('; ')}`);
          runFlags = parsed;
        }
        // The services import files by path: the uploaded texts go to a private temporary directory,
        // each under a name of its own there (see uploadFileName). What the page is told names the
        // uploaded file, never the temporary copy.
        const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'kvbench-import-'));
        try {
          const files: string[] = [];
          const uploaded = new Map<string, { name: string; sourceFile: string; modifiedAt: Date | null }>();
          const writeErrors: { file: string; message: string }[] = [];
          for (const [i, f] of r.files.entries()) {
            const file = path.join(dir, uploadFileName(i, r.files.length, f.name));
            try {
              await fsp.writeFile(file, f.text, { mode: 0o600, flag: 'wx' });
            } catch (err) {
              writeErrors.push({ file: f.name, message: `could not be stored for the import: ${(err as NodeJS.ErrnoException).code ?? 'error'}` });
              continue;
            }
            files.push(file);
            uploaded.set(file, { name: f.name, sourceFile: `uploaded: ${f.name}`, modifiedAt: f.lastModifiedMs === undefined ? null : new Date(f.lastModifiedMs) });
          }
          const res = await importResultsFiles(s, files, {
            systemLabel: r.systemLabel,
            driveLabel: r.driveLabel ?? null,
            scenarioId,
            options: runFlags?.options ?? null,
            givenOptionKeys: runFlags?.given ?? [],
            suiteLabel: r.label ?? null,
            // The temporary copies are gone after this call: record where the files really came from.
            originOf: (file) => uploaded.get(file) ?? { sourceFile: 'uploaded', modifiedAt: null },
            chooseDatabase: APP_STORE_OPTIONS.chooseDatabase,
          });
          // Longest first: no temporary path is then replaced inside a longer one.
          const copies = [...uploaded].sort(([a], [b]) => b.length - a.length);
          const own = (text: string): string => copies.reduce((t, [file, u]) => t.replaceAll(file, u.name), text).replaceAll(dir, 'the upload');
          const named = <T extends { file: string; message?: string }>(x: T): T => ({ ...x, file: uploaded.get(x.file)?.name ?? own(x.file), ...(x.message === undefined ? {} : { message: own(x.message) }) });
          if (res.imported.length > 0) emit({ type: 'history.changed', reason: `${res.imported.length} file(s) imported` });
          return {
            suiteId: res.suiteId,
            systemId: res.systemId,
            imported: res.imported.map(named),
            skipped: res.skipped.map(named),
            errors: [...writeErrors, ...res.errors.map(named)],
          };
        } finally {
          await fsp.rm(dir, { recursive: true, force: true });
        }
      });
    },

    async 'endpoint.list'(r) {
      const es = endpointStore();
      const runs = es.listRuns({ ...(r.labels?.length ? { labels: r.labels } : {}), limit: r.limit ?? 1000 });
      return { labels: es.labels(), runs: runs.map(endpointRow) };
    },

    async 'endpoint.get'(r) {
      const es = endpointStore();
      const run = endpointDetail(es.requireRun(r.id));
      return { run, failedRequests: es.requests(r.id).filter((q) => q.status !== 'ok').slice(0, MAX_FAILED_REQUESTS).map(failedRequest) };
    },

    async 'endpoint.compare'(r) {
      return compareLabels(endpointStore(), r.labelA, r.labelB, { includePartial: r.includePartial, latestOnly: r.latest, runIdsA: r.runIdsA, runIdsB: r.runIdsB });
    },

    async 'endpoint.export'(r) {
      const { format, requests, ...filter } = r;
      // Unknown runs are NOT_FOUND (the store says so); only making the file is EXPORT_FAILED.
      const model = buildEndpointExportModel(endpointStore(), filter);
      if (model.runs.length === 0) fail('NOT_FOUND', 'no endpoint runs match: record one with kvbench endpoint run (see docs/endpoint.md)');
      let data: Buffer;
      try {
        data = await renderEndpointExport(model, format, { requests: requests ?? false });
      } catch (err) {
        throw Object.assign(new Error(`export failed: ${toIpcError(err).message}`), { code: 'EXPORT_FAILED' });
      }
      const labels = [...new Set(model.runs.map((x) => x.systemLabel))];
      const what =
        filter.runIds?.length === 1 ? `endpoint-run-${filter.runIds[0]}` : labels.length <= 2 ? `endpoint-${labels.map(fileNamePart).join('-vs-')}` : 'endpoint-runs';
      return { ...exportedFile(what, format, data), runCount: model.runs.length };
    },
  };

  return {
    channels: CHANNELS,
    downloads,
    get databasePath() {
      return settings.databasePath;
    },
    get suiteState() {
      return run?.state ?? 'idle';
    },
    async invoke(channel, raw) {
      if (!isChannel(channel)) return { ok: false, error: { code: 'NOT_FOUND', message: `unknown channel '${String(channel).slice(0, 100)}'` } };
      const c = CONTRACT[channel];
      const req = c.request.safeParse(raw ?? {});
      if (!req.success) return { ok: false, error: { code: 'VALIDATION', message: `${channel}: ${z.prettifyError(req.error)}` } };
      let value: unknown;
      try {
        value = await (handlers[channel] as (r: unknown) => Promise<unknown>)(req.data);
      } catch (err) {
        // A page SQLite finds damaged while reading (damage the open's check did not see: bit rot in
        // a file recorded sound, which changes no times): the next open checks the file whole.
        if (isDamageError(err) && store !== null && damaged === null) {
          forgetSound(store.path);
          const message = `the database ${store.path} is damaged (${(err as { code: string }).code}: ${(err as Error).message}), found while reading it; nothing was written to it. ${DAMAGE_FOUND_LATER}`;
          log('error', message);
          return { ok: false, error: { code: 'DB_CORRUPT', message } };
        }
        return { ok: false, error: toIpcError(err) };
      } finally {
        logUnreadable();
      }
      const res = c.response.safeParse(value);
      if (!res.success) {
        log('error', `${channel}: response does not match the contract: ${z.prettifyError(res.error)}`);
        return { ok: false, error: { code: 'INTERNAL', message: `${channel}: the backend produced a response outside the contract` } };
      }
      // The parse drops what the schema lacks, silently: said here, so a field added to a handler's
      // answer and not to the contract shows up in the log (and fails the backend tests).
      const dropped = droppedFields(value, res.data);
      if (dropped.length > 0) log('error', `${channel}: ${CONTRACT_DROPPED}: ${dropped.join(', ')}`);
      return { ok: true, value: res.data };
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async close() {
      closing.abort(opts.mode === 'browser' ? 'kvbench serve is shutting down' : 'the kvbench app is closing');
      clearInterval(replacedWatch);
      const active = run;
      if (active) {
        // Not the user's Cancel: the trial's reason says the server (or the app) went away.
        active.controller.abort(opts.mode === 'browser' ? 'stopped: kvbench serve shut down' : 'stopped: the kvbench app was closed');
        await active.done.catch(() => {});
      }
      // A recovery, or a switch reading a damaged database, on a worker thread: aborted above, it ends
      // once its worker has exited and its temporary file is removed. Waited for, so that nothing of it
      // outlives close() (the Electron app quits right after, which would leave the file behind).
      for (let queued = settingsQueue; ; queued = settingsQueue) {
        await queued;
        if (queued === settingsQueue) break;
      }
      listeners.clear();
      // An import under way ends first: its database closed under it, it would fail half-way.
      while (writes.size > 0) await Promise.allSettled([...writes]);
      // Reports and exports were stopped (closing): their workers have gone before the database is closed.
      while (offThread.size > 0) await Promise.allSettled([...offThread]);
      await reportWorkers.close();
      // Exports not downloaded yet, and the folder they wait in.
      await downloads.close();
      store?.close();
      store = null;
    },
  };
}
