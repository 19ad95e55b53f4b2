// The guided suite: hardware → plan → run (live progress from the backend's events) → report.
// The run state is rebuilt from `suite.status` when a page attaches to a suite already running
// (a reload, a second browser tab), so nothing here depends on having seen every event.
import { defineStore } from 'pinia';
import { computed, reactive, ref, shallowRef } from 'vue';
import type { HardwareProfile } from '../../src-shared/domain/hardware.ts';
import { scenarioLabel, type ProfileId, type SuitePlan } from '../../src-shared/domain/scenarios.ts';
import type { TrialRowStatus } from '../../src-shared/domain/store-types.ts';
import type { ProgressEvent } from '../../src-shared/engine-protocol.ts';
import type { Advice, IpcError, PlanRequest, SuiteRecordData, TrialRecordData } from '../../src-shared/ipc/contract.ts';
import type { AppEvent } from '../../src-shared/ipc/events.ts';
import { api } from '../api/api.ts';
import { useAppStore } from './app.ts';

export type WizardStep = 'hardware' | 'plan' | 'run' | 'report';
/**
 * 'not-started': the suite ended before its first trial (cancelled while the hardware was detected
 * and the drive probed, or the server went away then): no suite was created and nothing was stored,
 * so there is nothing to report or resume. A user's own cancel is not a failure.
 * 'interrupted': the suite's runner ended while it ran (the server was killed or restarted); the
 * database marks it so, its running trial aborted, and it can be resumed from History.
 */
export type RunPhase = 'idle' | 'preparing' | 'running' | 'finished' | 'cancelled' | 'interrupted' | 'not-started' | 'failed';
/** Why a suite is 'not-started': the user's cancel, or the server that stopped answering for it. */
export type NotStartedReason = 'cancelled' | 'lost';

export interface TrialRow {
  key: string;
  scenarioId: string;
  label: string;
  trialIndex: number;
  trialsPerScenario: number;
  /** 'not-run': the suite ended (cancelled) before this trial started; nothing of it is stored. */
  status: 'queued' | 'not-run' | TrialRowStatus;
  trialId: number | null;
  wallMs: number | null;
  tokPerS: number | null;
  readBytesPerS: number | null;
  reason: string | null;
  estimatedS: number;
}

export interface LiveSeries {
  t: number[];
  tokPerS: number[];
  e2eP95Ms: (number | null)[];
  storageReadP95Ms: (number | null)[];
  users: number[];
  queue: number[];
  readBytesPerS: number[];
  writeBytesPerS: number[];
}

export interface PlanForm {
  profile: ProfileId;
  trials: number;
  /** null = the profile's seconds per trial. */
  durationS: number | null;
  /** Seconds each trial runs before its measured window opens; 0 = none (the reference). */
  warmUpS: number;
  /** '' = the profile's model. */
  model: string;
  /** null = the profile's scenarios. */
  scenarios: string[] | null;
  extras: boolean;
  probe: boolean;
  /** null = the profile's cap. */
  storageCapacityGib: number | null;
  label: string;
}

/** The plan form's number fields. */
export type NumberField = 'trials' | 'durationS' | 'warmUpS' | 'storageCapacityGib';

/**
 * A number field's text as the form's value, or what is wrong with it, in the field's own words (the
 * contract's limits: the backend would refuse the same, as raw validator output). Nothing is
 * clamped or rounded: a value the form shows is the value planned. `badInput`: the browser could not
 * read the text as a number (it then reports it as empty).
 */
export function parseNumberField(field: NumberField, text: string, badInput = false): { value: number | null } | { problem: string } {
  const t = text.trim();
  const n = Number(t);
  const whole = t !== '' && !badInput && Number.isInteger(n);
  switch (field) {
    case 'trials':
      if (t === '' && !badInput) return { problem: 'Enter how many trials to run per scenario: a whole number from 1 to 100.' };
      return whole && n >= 1 && n <= 100 ? { value: n } : { problem: 'Trials per scenario must be a whole number from 1 to 100.' };
    case 'durationS':
      if (t === '' && !badInput) return { value: null };
      return whole && n >= 1 && n <= 86_400 ? { value: n } : { problem: "Seconds per trial must be a whole number from 1 to 86400, or empty for the profile's." };
    case 'warmUpS':
      if (t === '' && !badInput) return { value: 0 };
      return whole && n >= 0 && n <= 3600 ? { value: n } : { problem: 'Warm-up must be a whole number of seconds from 0 to 3600 (0: none).' };
    case 'storageCapacityGib':
      if (t === '' && !badInput) return { value: null };
      return !badInput && Number.isFinite(n) && n >= 0 && n <= 1_000_000
        ? { value: n }
        : { problem: "Storage tier capacity must be a number of GiB, 0 or more (0: 95 % of the free space), or empty for the profile's cap." };
  }
}

const MAX_POINTS = 3000;
const MAX_LOGS = 200;

const emptySeries = (): LiveSeries => ({ t: [], tokPerS: [], e2eP95Ms: [], storageReadP95Ms: [], users: [], queue: [], readBytesPerS: [], writeBytesPerS: [] });
const rowKey = (scenarioId: string, trialIndex: number): string => `${scenarioId}#${trialIndex}`;

export function rowsFromPlan(plan: SuitePlan): TrialRow[] {
  const rows: TrialRow[] = [];
  for (const r of plan.runs) {
    for (let i = 0; i < r.trials; i++) {
      rows.push({
        key: rowKey(r.scenarioId, i),
        scenarioId: r.scenarioId,
        label: r.label,
        trialIndex: i,
        trialsPerScenario: r.trials,
        status: 'queued',
        trialId: null,
        wallMs: null,
        tokPerS: null,
        readBytesPerS: null,
        reason: null,
        estimatedS: r.estimatedSecondsPerTrial,
      });
    }
  }
  return rows;
}

/**
 * Seconds left: the estimate of every trial not yet finished (less what the current one has run),
 * plus `unseenS` for trials the page has no row for yet (a resumed suite's rows appear as its
 * trials start), scaled by how the trials that ran to their end compared with their estimates.
 * A failed, aborted or partial trial stopped early: its short time says nothing about how long a
 * full trial takes, and would shrink every remaining estimate.
 */
export function etaSeconds(rows: readonly TrialRow[], currentKey: string | null, currentElapsedS: number, unseenS = 0): number | null {
  if (rows.length === 0 && unseenS === 0) return null;
  let remaining = unseenS;
  let estDone = 0;
  let actualDone = 0;
  for (const r of rows) {
    if (r.status === 'queued') remaining += r.estimatedS;
    else if (r.status === 'running') remaining += Math.max(0, r.estimatedS - (r.key === currentKey ? currentElapsedS : 0));
    else if (r.status === 'complete' && r.wallMs !== null && r.estimatedS > 0) {
      estDone += r.estimatedS;
      actualDone += r.wallMs / 1000;
    }
  }
  const factor = estDone > 0 ? Math.min(3, Math.max(0.5, actualDone / estDone)) : 1;
  return remaining * factor;
}

/** The engine's phases whose progress clock starts again at zero (benchmark.ts: the warm-up counts from the request loop's start, the measured window from its own). */
function restartsClock(phase: ProgressEvent['phase']): boolean {
  return phase === 'warming-up' || phase === 'running';
}

/** The run screen's phase for a stored suite that is no longer running here: only a clean end is 'finished'. */
export function endedPhase(status: SuiteRecordData['status']): RunPhase {
  return status === 'finished' ? 'finished' : status === 'cancelled' ? 'cancelled' : 'interrupted';
}

/**
 * How many of the events that arrived during a status request the snapshot already holds: the
 * longest start of `arrived` that is also the end of `snapshot` (both are the backend's emission
 * order, and the snapshot thins only its oldest progress events).
 */
export function overlap(snapshot: readonly AppEvent[], arrived: readonly AppEvent[]): number {
  const s = snapshot.map((e) => JSON.stringify(e));
  const a = arrived.map((e) => JSON.stringify(e));
  for (let k = Math.min(s.length, a.length); k > 0; k--) {
    let same = true;
    for (let i = 0; i < k && same; i++) same = s[s.length - k + i] === a[i];
    if (same) return k;
  }
  return 0;
}

export const useSuiteStore = defineStore('suite', () => {
  const step = ref<WizardStep>('hardware');

  // Hardware
  const cacheDir = ref('');
  const hardware = shallowRef<HardwareProfile | null>(null);
  const advice = ref<Advice[]>([]);
  const hardwareLoading = ref(false);
  const hardwareError = ref<IpcError | null>(null);
  /** The directory (as typed, trimmed) the hardware on screen was detected for. */
  const detectedDir = ref<string | null>(null);
  let detectSeq = 0;
  /** The field no longer names the directory the profile on screen describes. */
  const hardwareStale = computed(() => hardware.value !== null && cacheDir.value.trim() !== detectedDir.value);
  /**
   * Only a detection of the directory in the field, without blocking advice, may lead on to the plan:
   * a failed detection clears the last one, and an edited field makes it stale.
   */
  const hardwareUsable = computed(() => hardware.value !== null && !hardwareStale.value && hardwareError.value === null && !advice.value.some((a) => a.level === 'error'));

  // Plan
  const form = reactive<PlanForm>({
    profile: 'quick',
    trials: 3,
    durationS: null,
    warmUpS: 0,
    model: '',
    scenarios: null,
    extras: false,
    probe: true,
    storageCapacityGib: null,
    label: '',
  });
  const plan = shallowRef<SuitePlan | null>(null);
  const planLoading = ref(false);
  const planError = ref<IpcError | null>(null);
  /** The request the plan on screen was made with: Start sends exactly this. */
  const plannedRequest = shallowRef<PlanRequest | null>(null);
  let planSeq = 0;
  /** Number fields whose text cannot be planned: the text as typed (shown again) and why. The form keeps its last valid value. */
  const fieldProblems = reactive<Partial<Record<NumberField, { text: string; message: string }>>>({});
  /** What keeps the form from being planned, said in the form rather than by the backend's validator. */
  const formProblems = computed(() => [...Object.values(fieldProblems).map((p) => p.message), ...(cacheDir.value.trim() ? [] : ['Enter the cache directory.'])]);

  // Run
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
  const currentStartedMs = ref<number | null>(null);
  const progress = shallowRef<ProgressEvent | null>(null);
  /** The newest progress of the measured phase: draining and finishing report rates near zero. */
  const lastRunning = shallowRef<ProgressEvent | null>(null);
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
  const suiteTally = ref<{ complete: number; planned: number } | null>(null);
  /** The first trial of this run: the store numbers trials in order, so every later one is this run's too. */
  let firstTrialId: number | null = null;
  const runError = ref<IpcError | null>(null);
  /** The suite ended unseen and its stored outcome could not be read (deleted, another database, the server unreachable): there are no counts to state. */
  const outcomeUnread = ref(false);
  const notStartedReason = ref<NotStartedReason>('cancelled');
  const cancelRequested = ref(false);
  const starting = ref(false);

  const running = computed(() => phase.value === 'preparing' || phase.value === 'running');
  const doneCount = computed(() => rows.value.filter((r) => r.status !== 'queued' && r.status !== 'running' && r.status !== 'not-run').length);
  const currentRow = computed(() => rows.value.find((r) => r.key === currentKey.value) ?? null);
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
   * Seconds left in the suite. The current trial counts from its own start, start-up and warm-up
   * included as in its estimate (not the engine's window clock, which leaves them out).
   */
  const etaS = computed(() =>
    phase.value === 'running'
      ? etaSeconds(rows.value, currentKey.value, currentStartedMs.value === null ? 0 : Math.max(0, nowMs.value - currentStartedMs.value) / 1000, unseenEstimateS.value)
      : null,
  );

  /**
   * The plan on screen is what the form says now: no change waits to be planned and the last
   * re-plan did not fail. Only such a plan can be started.
   */
  const planCurrent = computed(
    () =>
      plan.value !== null &&
      plannedRequest.value !== null &&
      planError.value === null &&
      !planLoading.value &&
      formProblems.value.length === 0 &&
      JSON.stringify(plannedRequest.value) === JSON.stringify(planRequest()),
  );

  /**
   * Sets a number field from its text. Returns the text the field should show (the value as planned:
   * "" for the warm-up is 0), or null when the text cannot be planned and stays as typed, with its problem.
   */
  function setNumberField(field: NumberField, text: string, badInput = false): string | null {
    const r = parseNumberField(field, text, badInput);
    if ('problem' in r) {
      fieldProblems[field] = { text, message: r.problem };
      return null;
    }
    delete fieldProblems[field];
    if (field === 'trials' || field === 'warmUpS') form[field] = r.value ?? 0;
    else form[field] = r.value;
    return numberFieldText(field);
  }

  /** What a number field shows: the text that cannot be planned, else the form's value. */
  function numberFieldText(field: NumberField): string {
    const v = fieldProblems[field]?.text ?? form[field];
    return v === null ? '' : String(v);
  }

  function planRequest(): PlanRequest {
    return {
      cacheDir: cacheDir.value,
      profile: form.profile,
      trials: form.trials,
      extras: form.extras,
      probe: form.probe,
      ...(form.durationS !== null ? { durationS: form.durationS } : {}),
      ...(form.warmUpS > 0 ? { warmUpS: form.warmUpS } : {}),
      ...(form.model ? { model: form.model } : {}),
      ...(form.scenarios !== null ? { scenarios: form.scenarios } : {}),
      ...(form.storageCapacityGib !== null ? { storageCapacityGib: form.storageCapacityGib } : {}),
    };
  }

  async function detect(dir?: string): Promise<void> {
    if (dir !== undefined) cacheDir.value = dir;
    const seq = ++detectSeq;
    const wanted = cacheDir.value.trim();
    if (!wanted) {
      clearHardware({ code: 'VALIDATION', message: 'Enter the directory the storage tier will write to.' });
      hardwareLoading.value = false;
      return;
    }
    hardwareLoading.value = true;
    hardwareError.value = null;
    const r = await api().call('hardware.detect', { cacheDir: wanted });
    if (seq !== detectSeq) return; // a newer detection is on its way
    hardwareLoading.value = false;
    if (r.ok) {
      hardware.value = r.value.hardware;
      advice.value = r.value.advice;
      detectedDir.value = wanted;
    } else {
      clearHardware(r.error);
    }
  }

  /** What the last detection found describes another directory: it must not stay on screen as this one's. */
  function clearHardware(error: IpcError): void {
    hardware.value = null;
    advice.value = [];
    detectedDir.value = null;
    hardwareError.value = error;
  }

  async function replan(): Promise<void> {
    const seq = ++planSeq;
    // The form says what is wrong next to its fields; the plan on screen is then not current.
    if (formProblems.value.length > 0) {
      planLoading.value = false;
      return;
    }
    const request = planRequest();
    planLoading.value = true;
    const r = await api().call('suite.plan', request);
    if (seq !== planSeq) return; // a newer request is on its way
    planLoading.value = false;
    if (r.ok) {
      plan.value = r.value.plan;
      plannedRequest.value = request;
      planError.value = null;
    } else {
      planError.value = r.error;
    }
  }

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
    currentStartedMs.value = null;
    progress.value = null;
    lastRunning.value = null;
    series.value = emptySeries();
    seriesVersion.value++;
    logs.value = [];
    counts.value = { complete: 0, partial: 0, failed: 0, aborted: 0 };
    runError.value = null;
    outcomeUnread.value = false;
    resumed.value = false;
    countsKnown.value = true;
    suiteTally.value = null;
    firstTrialId = null;
    notStartedReason.value = 'cancelled';
    cancelRequested.value = false;
  }

  async function start(): Promise<IpcError | null> {
    if (!planCurrent.value || !plan.value || !plannedRequest.value || starting.value) return null;
    const request = plannedRequest.value;
    resetRun();
    starting.value = true;
    runPlan.value = plan.value;
    phase.value = 'preparing';
    preparation.value = 'Starting …';
    step.value = 'run';
    const r = await api().call('suite.start', { ...request, label: form.label.trim() || null });
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
    if (s.request) cacheDir.value = s.request.cacheDir;
    phase.value = s.state === 'preparing' ? 'preparing' : 'running';
    suiteId.value = s.suiteId;
    for (const e of snapshot) apply(e);
    // The replayed suite.started stamped "now": the elapsed time counts from the suite's own start
    // (the backend's clock, preparation included).
    const since = s.startedAt ? Date.parse(s.startedAt) : NaN;
    if (startedAtMs.value !== null && Number.isFinite(since)) startedAtMs.value = since;
    planWanted = false; // the snapshot's own suite.started asks for nothing: its plan is the one there is
    for (const e of arrived.slice(overlap(snapshot, arrived))) apply(e);
    if (step.value !== 'report') step.value = 'run';
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
    // An interrupted suite's end time is when the next start found it, not when it stopped.
    const finishedAt = record.finishedAt && phase.value !== 'interrupted' ? Date.parse(record.finishedAt) : NaN;
    finishedWallMs.value = Number.isFinite(finishedAt) && startedAtMs.value !== null ? Math.max(0, finishedAt - startedAtMs.value) : null;
  }

  /** The suite's planned slots (its whole plan, not this resume's part) and how many have a complete attempt. */
  function tallyOf(record: SuiteRecordData): { complete: number; planned: number } | null {
    const plannedRuns = runPlan.value?.runs;
    if (!plannedRuns) return null;
    const planned = plannedRuns.reduce((sum, r) => sum + r.trials, 0);
    return { complete: Math.max(0, planned - record.trialsLeft), planned };
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
    }
    endRows();
  }

  // The warm-up and the measured window each count from their own zero: the chart's axis carries the
  // window on from where the warm-up ended. Draining goes on with the window's clock, so it never
  // starts a new one (an early draining sample is dropped, not moved a whole window on).
  const seriesClock = { phase: '', offsetS: 0 };
  function pushPoint(p: ProgressEvent): void {
    // 'finishing' carries the window's end time, earlier than the draining samples before it, and
    // zeros for every rate: not a measurement, so not a point.
    if (p.phase === 'finishing') return;
    const s = series.value;
    if (s.t.length === 0) Object.assign(seriesClock, { phase: p.phase, offsetS: 0 });
    const last = s.t.length > 0 ? s.t[s.t.length - 1] : 0;
    if (p.phase !== seriesClock.phase) {
      if (restartsClock(p.phase) && p.elapsedNs / 1e9 + seriesClock.offsetS < last) seriesClock.offsetS = last;
      seriesClock.phase = p.phase;
    }
    const t = p.elapsedNs / 1e9 + seriesClock.offsetS;
    if (s.t.length > 0 && t < last) return;
    s.t.push(t);
    s.tokPerS.push(p.generatedTokensPerSec);
    s.e2eP95Ms.push(p.e2eLatencyP95Ns === null ? null : p.e2eLatencyP95Ns / 1e6);
    s.storageReadP95Ms.push(p.storageReadP95Ns === null ? null : p.storageReadP95Ns / 1e6);
    s.users.push(p.activeUsers);
    s.queue.push(p.queueDepth);
    s.readBytesPerS.push(p.storageReadBytesPerSec);
    s.writeBytesPerS.push(p.storageWriteBytesPerSec);
    if (s.t.length > MAX_POINTS) for (const k of Object.keys(s) as (keyof LiveSeries)[]) s[k].splice(0, s[k].length - MAX_POINTS);
    seriesVersion.value++;
  }

  /** The row of an event's trial, made when this page has none yet. */
  function ensureRow(e: { trialId?: number; scenarioId: string; label: string; trialIndex: number; trialsPerScenario: number }): TrialRow {
    if (e.trialId !== undefined) firstTrialId = Math.min(firstTrialId ?? e.trialId, e.trialId);
    const key = rowKey(e.scenarioId, e.trialIndex);
    let row = rows.value.find((r) => r.key === key);
    if (!row) {
      const est = runPlan.value?.runs.find((r) => r.scenarioId === e.scenarioId)?.estimatedSecondsPerTrial ?? 0;
      rows.value.push({
        key,
        scenarioId: e.scenarioId,
        label: e.label,
        trialIndex: e.trialIndex,
        trialsPerScenario: e.trialsPerScenario,
        status: 'queued',
        trialId: null,
        wallMs: null,
        tokPerS: null,
        readBytesPerS: null,
        reason: null,
        estimatedS: est,
      });
      row = rows.value[rows.value.length - 1];
    }
    return row;
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
        startedAtMs.value = Date.now();
        preparation.value = null;
        if (!e.resumed && runPlan.value && rows.value.length === 0) rows.value = rowsFromPlan(runPlan.value);
        // Started elsewhere (Resume, another tab) or before this page had the plan: suite.status has it.
        if (!runPlan.value) planWanted = true;
        if (step.value !== 'report') step.value = 'run';
        return;
      case 'suite.trialStarted': {
        const row = ensureRow(e);
        row.status = 'running';
        row.trialId = e.trialId;
        currentKey.value = row.key;
        currentStartedMs.value = e.startedAtMs ?? Date.now();
        progress.value = null;
        lastRunning.value = null;
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
        }
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
    step,
    cacheDir,
    hardware,
    advice,
    hardwareLoading,
    hardwareError,
    detectedDir,
    hardwareStale,
    hardwareUsable,
    form,
    plan,
    planLoading,
    planError,
    planCurrent,
    fieldProblems,
    formProblems,
    setNumberField,
    numberFieldText,
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
    progress,
    lastRunning,
    series,
    seriesVersion,
    logs,
    counts,
    resumed,
    countsKnown,
    suiteTally,
    runError,
    outcomeUnread,
    notStartedReason,
    cancelRequested,
    starting,
    running,
    doneCount,
    unseenEstimateS,
    elapsedS,
    etaS,
    holdClock,
    planRequest,
    detect,
    replan,
    start,
    cancel,
    attach,
    handleEvent,
    resetRun,
  };
});
