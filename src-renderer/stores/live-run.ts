// The live run of a guided suite: its phase, trial rows, the current trial's chart, counts and clock,
// driven by the backend's events. The state is rebuilt from `suite.status` when a page attaches to
// a suite already running (a reload, a second browser tab), so nothing here depends on having seen
// every event. The rules over this state are pure, in live-run-model.ts.
import { defineStore } from 'pinia';
import { computed, ref, shallowRef } from 'vue';
import { namedTierBytes, scenarioLabel, spilledTiers, type SuitePlan } from '../../src-shared/domain/scenarios.ts';
import { suiteOutcome } from '../../src-shared/domain/store-types.ts';
import type { ProgressEvent } from '../../src-shared/engine-protocol.ts';
import type { IpcError, Result, SuiteRecordData, TrialRecordData } from '../../src-shared/ipc/contract.ts';
import type { AppEvent } from '../../src-shared/ipc/events.ts';
import { api } from '../api/api.ts';
import {
  appendPoint,
  cpuMovedAfter,
  emptySeries,
  endedPhase,
  liveSpill,
  measuresQueueing,
  queueingVerdictAtClose,
  overlap,
  plannedMaxRequests,
  queuedRow,
  rowKey,
  rowsFromPlan,
  timeLeft,
  type LiveSeries,
  type NotStartedReason,
  type RunPhase,
  type SeriesClock,
  type TrialRow,
} from '../live-run-model.ts';
import { useAppStore } from './app.ts';
import { useWizardStore } from './wizard.ts';

const MAX_LOGS = 200;

export const useLiveRunStore = defineStore('liveRun', () => {
  // The wizard's step follows the run (Start and a suite started elsewhere show the run screen), and
  // Start sends the plan on screen.
  const wizard = useWizardStore();

  const phase = ref<RunPhase>('idle');
  const suiteId = ref<number | null>(null);
  const runPlan = shallowRef<SuitePlan | null>(null);
  const total = ref(0);
  const estimatedSeconds = ref(0);
  const startedAtMs = ref<number | null>(null);
  const finishedWallMs = ref<number | null>(null);
  const preparation = ref<string | null>(null);
  const rows = ref<TrialRow[]>([]);
  const currentKey = ref<string | null>(null);
  /**
   * The trial whose live card the run screen showed last: unlike currentKey, kept when the suite
   * ends, so that the card stays (marked ended) with the numbers that trial stored, and its charts
   * with it (the series stays too), until another suite starts or the user leaves the Run step
   * (forgetLastTrial).
   */
  const lastTrialKey = ref<string | null>(null);
  const currentStartedMs = ref<number | null>(null);
  const progress = shallowRef<ProgressEvent | null>(null);
  /** The newest progress of the measured phase: draining and finishing report rates near zero. */
  const lastRunning = shallowRef<ProgressEvent | null>(null);
  /** The current trial's CPU tier moved bytes on its clock (cpuMovedAfter): a GPU-only trial spilling to it. */
  const cpuMoved = ref(false);
  const series = shallowRef<LiveSeries>(emptySeries());
  const seriesVersion = ref(0);
  const logs = ref<{ level: string; label: string; message: string }[]>([]);
  /** This run's trials by status: for a resumed suite, those of this resume only. */
  const counts = ref<Record<'complete' | 'partial' | 'failed' | 'aborted', number>>({ complete: 0, partial: 0, failed: 0, aborted: 0 });
  /** The run is a resume of a suite that ran before: `counts` are not the suite's. */
  const resumed = ref(false);
  /** False when a resume ended unseen before this page saw any of its trials: which stored trials are this resume's is then unknown. */
  const countsKnown = ref(true);
  /** A resumed suite's planned trial slots, and how many of them have a complete attempt (any run's), once it ended. */
  const suiteTally = ref<{ complete: number; planned: number; deleted: number } | null>(null);
  /** The first trial of this run: the store numbers trials in order, so every later one is this run's too. */
  let firstTrialId: number | null = null;
  const runError = ref<IpcError | null>(null);
  /**
   * The suite finished without one complete trial of any run (suiteOutcome's 'failed'): nothing of
   * it can be reported, which a 'finished' badge would hide.
   */
  const noCompleteTrial = ref(false);
  /** The suite ended unseen and its stored outcome could not be read (deleted, another database, the server unreachable): there are no counts to state. */
  const outcomeUnread = ref(false);
  const notStartedReason = ref<NotStartedReason>('cancelled');
  const cancelRequested = ref(false);
  const starting = ref(false);

  const running = computed(() => phase.value === 'preparing' || phase.value === 'running');
  const doneCount = computed(() => rows.value.filter((r) => r.status !== 'queued' && r.status !== 'running' && r.status !== 'not-run').length);
  const currentRow = computed(() => rows.value.find((r) => r.key === currentKey.value) ?? null);
  const lastTrialRow = computed(() => rows.value.find((r) => r.key === lastTrialKey.value) ?? null);
  /** The spill of the trial the Run step shows (the running one, or the suite's last once it ended), as its newest event says. */
  const spill = computed(() => {
    const row = currentRow.value ?? lastTrialRow.value;
    return row ? liveSpill(row.scenarioId, progress.value, cpuMoved.value) : null;
  });
  /** The bytes the shown trial's named tiers hold, from the plan: null without one (a page attached to a suite it has no plan of). */
  const spillCapacityBytes = computed(() => {
    const row = currentRow.value ?? lastTrialRow.value;
    const options = row ? runPlan.value?.runs.find((r) => r.scenarioId === row.scenarioId)?.options : undefined;
    return row && options ? namedTierBytes(row.scenarioId, options) : null;
  });
  /** The estimate of the trials still without a row: those of a resumed suite that have not started. */
  const unseenEstimateS = computed(() => (rows.value.length < total.value ? Math.max(0, estimatedSeconds.value - rows.value.reduce((sum, r) => sum + r.estimatedS, 0)) : 0));

  // One clock for the times every screen shows of the run (elapsed, time left), so that the sidebar
  // and the run card state the same figure. It ticks while a component that shows them holds it,
  // and stops while the event stream is down: what is on screen is then as of that moment.
  const app = useAppStore();
  const tickMs = ref(Date.now());
  const nowMs = computed(() => app.connectionLostAtMs ?? tickMs.value);
  let clockHolders = 0;
  let clockTimer: ReturnType<typeof setInterval> | undefined;
  /** Keeps the run's clock ticking until the returned function is called (a component's mount to unmount). */
  function holdClock(): () => void {
    if (clockHolders++ === 0) {
      tickMs.value = Date.now();
      clockTimer = setInterval(() => (tickMs.value = Date.now()), 1000);
    }
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      if (--clockHolders === 0) clearInterval(clockTimer);
    };
  }
  /** Seconds since the suite started (preparation included: the backend's start when attached). */
  const elapsedS = computed(() => (startedAtMs.value === null ? null : Math.max(0, nowMs.value - startedAtMs.value) / 1000));
  /**
   * The time left in the suite (timeLeft). The current trial counts from its own start, start-up and
   * warm-up included as in its estimate (not the engine's window clock, which leaves them out); one
   * that ends after N requests, from its requests' pace in its window.
   */
  const eta = computed(() =>
    phase.value === 'running'
      ? timeLeft(
          rows.value,
          { key: currentKey.value, elapsedS: currentStartedMs.value === null ? 0 : Math.max(0, nowMs.value - currentStartedMs.value) / 1000, progress: progress.value },
          { seconds: unseenEstimateS.value, requestLimited: runPlan.value?.runs.some((r) => plannedMaxRequests(r) > 0) ?? false },
        )
      : null,
  );

  function resetRun(): void {
    phase.value = 'idle';
    suiteId.value = null;
    runPlan.value = null;
    total.value = 0;
    estimatedSeconds.value = 0;
    startedAtMs.value = null;
    finishedWallMs.value = null;
    preparation.value = null;
    rows.value = [];
    currentKey.value = null;
    lastTrialKey.value = null;
    currentStartedMs.value = null;
    progress.value = null;
    lastRunning.value = null;
    cpuMoved.value = false;
    series.value = emptySeries();
    seriesVersion.value++;
    logs.value = [];
    counts.value = { complete: 0, partial: 0, failed: 0, aborted: 0 };
    runError.value = null;
    outcomeUnread.value = false;
    noCompleteTrial.value = false;
    resumed.value = false;
    countsKnown.value = true;
    suiteTally.value = null;
    firstTrialId = null;
    notStartedReason.value = 'cancelled';
    cancelRequested.value = false;
  }

  async function start(): Promise<IpcError | null> {
    if (!wizard.planCurrent || !wizard.plan || !wizard.plannedRequest || starting.value) return null;
    const request = wizard.plannedRequest;
    resetRun();
    starting.value = true;
    runPlan.value = wizard.plan;
    return preparing('Starting …', () => api().call('suite.start', { ...request, label: wizard.form.label.trim() || null }));
  }

  /**
   * Resumes a stored suite (History's Resume; with `rerunDeleted`, its "Run deleted trials again",
   * which runs the slots whose complete trial the user deleted as well): the Run step shows it
   * preparing at once, as Start does, since the backend answers only once the hardware is detected
   * (and the drive probed, if planned so).
   */
  async function resume(id: number, opts: { rerunDeleted?: boolean; acrossVersions?: boolean } = {}): Promise<IpcError | null> {
    if (starting.value || running.value) return null;
    resetRun();
    starting.value = true;
    const rerunDeleted = opts.rerunDeleted === true;
    // acrossVersions: the user confirmed running the trials left under other metric definitions (suite.resumeCheck).
    const acrossVersions = opts.acrossVersions === true;
    return preparing(rerunDeleted ? `Running suite ${id}'s deleted trials again …` : `Resuming suite ${id} …`, () =>
      api().call('suite.resume', { suiteId: id, ...(rerunDeleted ? { rerunDeleted } : {}), ...(acrossVersions ? { acrossVersions } : {}) }),
    );
  }

  /**
   * Shows the Run step preparing while the backend starts (or resumes) the suite, which it answers
   * only once the hardware is detected; a refusal ends the run there, with its reason.
   */
  async function preparing(what: string, call: () => Promise<Result<{ suiteId: number }>>): Promise<IpcError | null> {
    phase.value = 'preparing';
    preparation.value = what;
    wizard.step = 'run';
    const r = await call();
    starting.value = false;
    if (!r.ok) {
      stopOn(r.error);
      return r.error;
    }
    suiteId.value = r.value.suiteId;
    return null;
  }

  async function cancel(): Promise<void> {
    cancelRequested.value = true;
    const r = await api().call('suite.cancel', {});
    if (!r.ok) runError.value = r.error;
  }

  // attach() rebuilds the run from a snapshot; events arriving meanwhile wait in `buffer` and are
  // applied after it, less those the snapshot already holds.
  let buffer: AppEvent[] | null = null;
  let attaching: Promise<void> | null = null;
  /** A suite started while this page had no plan for it: attach once more to fetch the plan. */
  let planWanted = false;

  /** Attaches to a suite the backend is running (after a reload, from another window, after Resume). */
  function attach(): Promise<void> {
    attaching ??= attachOnce().finally(() => {
      attaching = null;
      if (planWanted && !runPlan.value) {
        planWanted = false;
        void attach();
      }
    });
    return attaching;
  }

  async function attachOnce(): Promise<void> {
    buffer = [];
    const r = await api().call('suite.status', {});
    const arrived = buffer;
    buffer = null;
    if (!r.ok || r.value.state === 'idle') {
      for (const e of arrived) apply(e);
      // It ended while this page was not listening (a lost connection, a restarted server): only the
      // database knows how, and an interrupted suite must not read as finished.
      if (r.ok && running.value) await settleFromStore();
      return;
    }
    const s = r.value;
    const snapshot = s.events;
    resetRun();
    runPlan.value = s.plan;
    if (s.request) wizard.cacheDir = s.request.cacheDir;
    phase.value = s.state === 'preparing' ? 'preparing' : 'running';
    suiteId.value = s.suiteId;
    for (const e of snapshot) apply(e);
    // The replayed suite.started stamped "now": the elapsed time counts from the suite's own start
    // (the backend's clock, preparation included).
    const since = s.startedAt ? Date.parse(s.startedAt) : NaN;
    if (startedAtMs.value !== null && Number.isFinite(since)) startedAtMs.value = since;
    planWanted = false; // the snapshot's own suite.started asks for nothing: its plan is the one there is
    for (const e of arrived.slice(overlap(snapshot, arrived))) apply(e);
    if (wizard.step !== 'report') wizard.step = 'run';
  }

  /**
   * The outcome of the suite this page was following, which ended unseen: its status, counts and
   * trials as stored. Without a suite id no suite existed yet as far as this page knows.
   */
  async function settleFromStore(): Promise<void> {
    const id = suiteId.value;
    if (id === null) {
      phase.value = 'not-started';
      notStartedReason.value = 'lost';
      preparation.value = null;
      return;
    }
    const systemId = runPlan.value?.systemId;
    const [suites, trials] = await Promise.all([
      api().call('suites.list', { ...(systemId ? { systemIds: [systemId] } : {}), limit: 10_000 }),
      api().call('history.list', { selection: { suiteIds: [id] }, sort: { key: 'id', dir: 'asc' }, limit: 5000 }),
    ]);
    if (suiteId.value !== id || !running.value) return; // another suite started meanwhile, or its events came
    currentKey.value = null;
    preparation.value = null;
    const record = suites.ok ? suites.value.find((x) => x.id === id) : undefined;
    if (!record || !trials.ok) {
      phase.value = 'interrupted';
      outcomeUnread.value = true;
      runError.value = !suites.ok ? suites.error : !trials.ok ? trials.error : { code: 'NOT_FOUND', message: `Suite ${id} is not in the database any more: it was deleted, or another database is open.` };
      endRows();
      return;
    }
    // What the database says supersedes a request that failed while the server was away (a cancel).
    runError.value = null;
    cancelRequested.value = false;
    outcomeUnread.value = false;
    if (resumed.value) {
      // The suite's record counts every attempt of every run; this resume's are its own trials.
      const first = firstTrialId;
      const own = first === null ? [] : trials.value.trials.filter((t) => t.id >= first);
      settleRows(own);
      const c = { complete: 0, partial: 0, failed: 0, aborted: 0 };
      for (const t of own) if (t.status !== 'running') c[t.status] += 1;
      counts.value = c;
      countsKnown.value = first !== null;
      suiteTally.value = tallyOf(record);
    } else {
      settleRows(trials.value.trials);
      const c = record.trialCounts;
      counts.value = { complete: c.complete, partial: c.partial, failed: c.failed, aborted: c.aborted };
    }
    phase.value = endedPhase(record.status);
    noCompleteTrial.value = suiteOutcome(record.status, record.trialCounts.complete) === 'failed';
    // An interrupted suite's end time is when the next start found it, not when it stopped.
    const finishedAt = record.finishedAt && phase.value !== 'interrupted' ? Date.parse(record.finishedAt) : NaN;
    finishedWallMs.value = Number.isFinite(finishedAt) && startedAtMs.value !== null ? Math.max(0, finishedAt - startedAtMs.value) : null;
  }

  /** The suite's planned slots (its whole plan, not this resume's part) and how many have a complete attempt. */
  function tallyOf(record: SuiteRecordData): { complete: number; planned: number; deleted: number } | null {
    const plannedRuns = runPlan.value?.runs;
    if (!plannedRuns) return null;
    const planned = plannedRuns.reduce((sum, r) => sum + r.trials, 0);
    // A slot whose complete trial was deleted is neither complete now nor left to run.
    return { complete: Math.max(0, planned - record.trialsLeft - record.trialsDeleted), planned, deleted: record.trialsDeleted };
  }

  /** After a resume's end: where the whole suite stands, which the resume's own counts do not say. */
  async function readTally(id: number): Promise<void> {
    const systemId = runPlan.value?.systemId;
    const r = await api().call('suites.list', { ...(systemId ? { systemIds: [systemId] } : {}), limit: 10_000 });
    const record = r.ok ? r.value.find((x) => x.id === id) : undefined;
    if (suiteId.value !== id || !record) return; // another suite started meanwhile, or it cannot be read: the resume's own counts stand alone
    suiteTally.value = tallyOf(record);
  }

  /** A trial still shown running was stopped (its finish was missed); a queued one never ran. */
  function endRows(): void {
    for (const r of rows.value) {
      if (r.status === 'running') r.status = 'aborted';
      else if (r.status === 'queued') r.status = 'not-run';
    }
  }

  /** The rows as stored (a resumed trial's later attempt wins); the rest as a suite's end leaves them. */
  function settleRows(trials: readonly TrialRecordData[]): void {
    for (const t of trials) {
      const planned = runPlan.value?.runs.find((r) => r.scenarioId === t.scenarioId);
      const row = ensureRow({ scenarioId: t.scenarioId, label: planned?.label ?? scenarioLabel(t.scenarioId), trialIndex: t.trialIndex, trialsPerScenario: planned?.trials ?? t.trialIndex + 1 });
      row.status = t.status;
      row.trialId = t.id;
      row.wallMs = t.wallMs;
      row.tokPerS = t.metrics.wall_clock_throughput_tok_per_s ?? null;
      row.readBytesPerS = t.metrics.storage_read_bytes_per_s ?? null;
      row.reason = t.statusReason;
      row.spilled = spilledTiers(t.scenarioId, t.metrics).length > 0;
    }
    endRows();
  }

  const seriesClock: SeriesClock = { phase: '', offsetS: 0 };
  function pushPoint(p: ProgressEvent): void {
    if (appendPoint(series.value, seriesClock, p)) seriesVersion.value++;
  }

  /** The row of an event's trial, made when this page has none yet. */
  function ensureRow(e: { trialId?: number; scenarioId: string; label: string; trialIndex: number; trialsPerScenario: number }): TrialRow {
    if (e.trialId !== undefined) firstTrialId = Math.min(firstTrialId ?? e.trialId, e.trialId);
    const key = rowKey(e.scenarioId, e.trialIndex);
    let row = rows.value.find((r) => r.key === key);
    if (!row) {
      const planned = runPlan.value?.runs.find((r) => r.scenarioId === e.scenarioId);
      rows.value.push(queuedRow(e, planned?.estimatedSecondsPerTrial ?? 0, plannedMaxRequests(planned)));
      row = rows.value[rows.value.length - 1];
    }
    return row;
  }

  /** The user left the Run step after the suite ended: its last trial's card and charts have been seen. */
  function forgetLastTrial(): void {
    if (running.value) return;
    lastTrialKey.value = null;
    series.value = emptySeries();
    seriesVersion.value++;
  }

  function handleEvent(e: AppEvent): void {
    if (!e.type.startsWith('suite.')) return;
    if (buffer) {
      buffer.push(e);
      return;
    }
    apply(e);
    if (planWanted && !attaching) {
      planWanted = false;
      void attach();
    }
  }

  /**
   * The suite stopped outside any trial. A cancel before a suite existed is the user's choice, not a
   * failure; anything else (a refused start, a runner error) is.
   */
  function stopOn(error: IpcError): void {
    preparation.value = null;
    if (error.code === 'CANCELLED' && suiteId.value === null) {
      phase.value = 'not-started';
      runError.value = null;
    } else {
      phase.value = 'failed';
      runError.value = error;
    }
  }

  function apply(e: AppEvent): void {
    switch (e.type) {
      case 'suite.preparationProgressed':
        if (phase.value !== 'running') {
          if (phase.value !== 'preparing') resetRun();
          phase.value = 'preparing';
        }
        preparation.value = e.message;
        return;
      case 'suite.started':
        phase.value = 'running';
        suiteId.value = e.suiteId;
        total.value = e.total;
        estimatedSeconds.value = e.estimatedSeconds;
        resumed.value = e.resumed;
        lastTrialKey.value = null; // a new suite's (a page that saw no preparation: started elsewhere)
        startedAtMs.value = Date.now();
        preparation.value = null;
        if (!e.resumed && runPlan.value && rows.value.length === 0) rows.value = rowsFromPlan(runPlan.value);
        // Started elsewhere (Resume, another tab) or before this page had the plan: suite.status has it.
        if (!runPlan.value) planWanted = true;
        if (wizard.step !== 'report') wizard.step = 'run';
        return;
      case 'suite.trialStarted': {
        const row = ensureRow(e);
        row.status = 'running';
        row.trialId = e.trialId;
        currentKey.value = row.key;
        lastTrialKey.value = row.key;
        currentStartedMs.value = e.startedAtMs ?? Date.now();
        progress.value = null;
        lastRunning.value = null;
        cpuMoved.value = false;
        series.value = emptySeries();
        seriesVersion.value++;
        return;
      }
      case 'suite.trialProgressed': {
        const row = ensureRow(e);
        if (row.status === 'queued') row.status = 'running';
        if (currentKey.value !== row.key) {
          currentKey.value = row.key;
          series.value = emptySeries();
          progress.value = null;
          cpuMoved.value = false;
        }
        lastTrialKey.value = row.key;
        cpuMoved.value = cpuMovedAfter(cpuMoved.value, progress.value?.phase ?? null, e.progress);
        // Seen spilling in its measured window: the trial is stored flagged 'spilled', which its row says.
        const spilled = liveSpill(row.scenarioId, e.progress, cpuMoved.value);
        if (spilled && !spilled.warmUp) row.spilled = true;
        // Seen measuring queueing: its row says so, whatever its status; its card follows the close's verdict (the stored flag).
        if (measuresQueueing(e.progress)) row.queueing = true;
        const atClose = queueingVerdictAtClose(e.progress);
        if (atClose !== null) row.queueingAtClose = atClose;
        progress.value = e.progress;
        if (e.progress.phase === 'running') lastRunning.value = e.progress;
        pushPoint(e.progress);
        return;
      }
      case 'suite.trialLogged':
        if (e.level === 'warn' || e.level === 'error') {
          logs.value.push({ level: e.level, label: `${e.label} #${e.trialIndex + 1}`, message: e.message });
          if (logs.value.length > MAX_LOGS) logs.value.splice(0, logs.value.length - MAX_LOGS);
        }
        return;
      case 'suite.trialFinished': {
        const row = ensureRow(e);
        row.status = e.status;
        row.trialId = e.trialId;
        row.wallMs = e.wallMs;
        row.tokPerS = e.wallClockThroughputTokPerS;
        row.readBytesPerS = e.storageReadBytesPerS;
        row.reason = e.reason;
        counts.value = { ...counts.value, [e.status]: counts.value[e.status] + 1 };
        return;
      }
      case 'suite.finished':
        phase.value = e.status === 'cancelled' ? 'cancelled' : 'finished';
        noCompleteTrial.value = e.outcome === 'failed';
        suiteId.value = e.suiteId;
        counts.value = { ...e.counts };
        finishedWallMs.value = e.wallMs;
        currentKey.value = null;
        endRows();
        if (resumed.value) void readTally(e.suiteId);
        return;
      case 'suite.failed':
        if (e.suiteId !== null) suiteId.value = e.suiteId;
        stopOn(e.error);
        return;
      default:
        return;
    }
  }

  return {
    phase,
    suiteId,
    runPlan,
    total,
    estimatedSeconds,
    startedAtMs,
    finishedWallMs,
    preparation,
    rows,
    currentKey,
    currentStartedMs,
    currentRow,
    lastTrialKey,
    lastTrialRow,
    progress,
    lastRunning,
    spill,
    spillCapacityBytes,
    series,
    seriesVersion,
    logs,
    counts,
    resumed,
    countsKnown,
    suiteTally,
    runError,
    outcomeUnread,
    noCompleteTrial,
    notStartedReason,
    cancelRequested,
    starting,
    running,
    doneCount,
    unseenEstimateS,
    elapsedS,
    eta,
    holdClock,
    start,
    resume,
    cancel,
    attach,
    handleEvent,
    forgetLastTrial,
    resetRun,
  };
});
