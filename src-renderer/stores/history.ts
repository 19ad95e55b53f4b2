// The history browser: filters, sort and page over the stored trials, the suites, and the facets
// (systems, drives, suite labels, scenarios, models) the filters offer. Reloads when the backend says the
// history changed (a finished trial, an import, a delete).
import { defineStore } from 'pinia';
import { reactive, ref, shallowRef } from 'vue';
import type { TrialRowStatus } from '../../src-shared/domain/store-types.ts';
import type { IpcError, ResponseOf, Selection, SuiteRecordData, TrialRecordData } from '../../src-shared/ipc/contract.ts';
import type { AppEvent } from '../../src-shared/ipc/events.ts';
import { api } from '../api/api.ts';

export interface HistoryFilters {
  systemId: string;
  driveId: string;
  /** A suite label (every suite that carries it), or ''. */
  suiteLabel: string;
  model: string;
  scenarioId: string;
  status: '' | TrialRowStatus;
  /** YYYY-MM-DD (local dates) or ''. */
  since: string;
  until: string;
}

export const PAGE_SIZE = 50;

/** Local calendar dates → the ISO instants the store compares with (start and end of those days). */
export function selectionOf(f: HistoryFilters): Selection {
  const startOfDay = (d: string): string => new Date(`${d}T00:00:00`).toISOString();
  const endOfDay = (d: string): string => new Date(`${d}T23:59:59.999`).toISOString();
  return {
    ...(f.systemId ? { systemIds: [f.systemId] } : {}),
    ...(f.driveId ? { driveIds: [f.driveId] } : {}),
    ...(f.suiteLabel ? { suiteLabels: [f.suiteLabel] } : {}),
    ...(f.model ? { model: f.model } : {}),
    ...(f.scenarioId ? { scenarioIds: [f.scenarioId] } : {}),
    ...(f.status ? { statuses: [f.status] } : {}),
    ...(f.since ? { since: startOfDay(f.since) } : {}),
    ...(f.until ? { until: endOfDay(f.until) } : {}),
  };
}

export const useHistoryStore = defineStore('history', () => {
  const filters = reactive<HistoryFilters>({ systemId: '', driveId: '', suiteLabel: '', model: '', scenarioId: '', status: '', since: '', until: '' });
  const sort = reactive<{ key: string; dir: 'asc' | 'desc' }>({ key: 'startedAt', dir: 'desc' });
  const page = ref(0);
  const trials = shallowRef<TrialRecordData[]>([]);
  const total = ref(0);
  /** Whether `total` and `suites` are what the last load read: not when it could not read them (the server down, a locked database). */
  const totalKnown = ref(false);
  const suitesKnown = ref(false);
  /** Why the report flags each listed trial it flags (the list's `cautions`), by trial id. */
  const cautions = shallowRef<ReadonlyMap<number, string[]>>(new Map());
  /** Damaged stored rows the last list left out (its answer's `unreadable`). */
  const unreadable = shallowRef<string[]>([]);
  const loading = ref(false);
  const error = ref<IpcError | null>(null);
  const loaded = ref(false);
  const facets = shallowRef<ResponseOf<'history.facets'> | null>(null);
  const suites = shallowRef<SuiteRecordData[]>([]);
  const selected = ref<Set<number>>(new Set());
  /**
   * Every trial that matches the filters is selected, on every page ("select all matching"), not only
   * those in `selected` (the page's, shown checked). A bulk action asks the backend for their ids
   * (matchingIds) when it is taken. Filters changed, a row unchecked, a delete done: back to the page's.
   */
  const allMatching = ref(false);
  let seq = 0;
  let stale = false;

  /** Errors are returned, not dropped: an unreadable database must not look like an empty one. */
  async function loadFacets(): Promise<IpcError | null> {
    // With the filters: each filter's values counted under the others (matching), so they narrow.
    const r = await api().call('history.facets', { selection: selectionOf(filters) });
    if (!r.ok) return r.error;
    facets.value = r.value;
    return null;
  }

  async function loadSuites(): Promise<IpcError | null> {
    const r = await api().call('suites.list', {});
    suitesKnown.value = r.ok;
    if (!r.ok) return r.error;
    suites.value = r.value;
    return null;
  }

  const listPage = () =>
    api().call('history.list', { selection: selectionOf(filters), sort: { ...sort }, limit: PAGE_SIZE, offset: page.value * PAGE_SIZE });
  const lastPageOf = (total: number): number => Math.max(0, Math.ceil(total / PAGE_SIZE) - 1);

  async function load(): Promise<void> {
    const mine = ++seq;
    // A change reported from here on may be missing from this load's answer: onEvent marks it.
    stale = false;
    loading.value = true;
    const [first, facetsError, suitesError] = await Promise.all([listPage(), loadFacets(), loadSuites()]);
    let r = first;
    if (mine !== seq) return;
    // Deleting (here or elsewhere) emptied this page: show the last one that has rows. Only the
    // list is asked again; the facets and suites just came.
    while (r.ok && page.value > lastPageOf(r.value.total)) {
      page.value = lastPageOf(r.value.total);
      r = await listPage();
      if (mine !== seq) return;
    }
    loading.value = false;
    loaded.value = true;
    totalKnown.value = r.ok;
    if (r.ok) {
      trials.value = r.value.trials;
      total.value = r.value.total;
      cautions.value = new Map((r.value.cautions ?? []).map((c) => [c.trialId, c.messages]));
      unreadable.value = r.value.unreadable ?? [];
      error.value = facetsError ?? suitesError;
      // Keep only selections still on screen; with every match selected, every one on screen is.
      const ids = new Set(r.value.trials.map((t) => t.id));
      selected.value = allMatching.value ? ids : new Set([...selected.value].filter((id) => ids.has(id)));
    } else {
      error.value = r.error;
    }
    if (stale) await load();
  }

  function setSort(key: string): void {
    if (sort.key === key) sort.dir = sort.dir === 'asc' ? 'desc' : 'asc';
    else {
      sort.key = key;
      sort.dir = key === 'startedAt' || key.startsWith('metric:') ? 'desc' : 'asc';
    }
    page.value = 0;
    void load();
  }

  function clearFilters(): void {
    allMatching.value = false;
    Object.assign(filters, { systemId: '', driveId: '', suiteLabel: '', model: '', scenarioId: '', status: '', since: '', until: '' });
    page.value = 0;
    void load();
  }

  function toggle(id: number): void {
    // One unchecked of every match: the page's others stay selected, the other pages' do not.
    allMatching.value = false;
    const s = new Set(selected.value);
    if (s.has(id)) s.delete(id);
    else s.add(id);
    selected.value = s;
  }

  /** Selects every trial that matches the filters, on every page; or, with `false`, none. */
  function selectAllMatching(on: boolean): void {
    allMatching.value = on;
    selected.value = on ? new Set(trials.value.map((t) => t.id)) : new Set();
  }

  /** The trials the filters match now, on every page (history.ids), and their suites: what "all matching" acts on. */
  function matchingIds() {
    return api().call('history.ids', { selection: selectionOf(filters) });
  }

  async function deleteTrials(ids: number[]): Promise<IpcError | null> {
    const r = await api().call('trials.delete', { ids });
    if (!r.ok) return r.error;
    allMatching.value = false;
    selected.value = new Set();
    await load();
    return null;
  }

  async function deleteSuite(id: number): Promise<IpcError | null> {
    const r = await api().call('suites.delete', { id });
    if (!r.ok) return r.error;
    await load();
    return null;
  }

  function onEvent(e: AppEvent): void {
    if (e.type !== 'history.changed') return;
    if (!loaded.value) return;
    // Coalesce bursts (a suite finishes many trials): one reload at a time, and one more after it
    // for whatever changed while it ran.
    if (loading.value) stale = true;
    else void load();
  }

  return { filters, sort, page, trials, total, totalKnown, suitesKnown, cautions, unreadable, loading, error, loaded, facets, suites, selected, allMatching, load, loadFacets, loadSuites, setSort, clearFilters, toggle, selectAllMatching, matchingIds, deleteTrials, deleteSuite, onEvent };
});
