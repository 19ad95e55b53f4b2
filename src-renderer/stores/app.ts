// The app's shell state: what the backend is (app.info), the settings, the event-stream connection
// and the current screen (kept in location.hash so Back and Forward work and a reload stays put).
import { defineStore } from 'pinia';
import { computed, ref } from 'vue';
import { inAppWords } from '../app-words.ts';
import type { IpcError, RequestOf, ResponseOf, Settings } from '../../src-shared/ipc/contract.ts';
import { api } from '../api/api.ts';
import type { ConnectionState } from '../api/transport.ts';
import { DEFAULT_UNITS, type UnitPrefs } from '../format.ts';

export type RouteName = 'wizard' | 'history' | 'compare' | 'endpoint' | 'report' | 'settings';
export interface Route {
  name: RouteName;
  /** e.g. { suite: '3' } for a suite's report. */
  query: Record<string, string>;
}

const ROUTES: readonly RouteName[] = ['wizard', 'history', 'compare', 'endpoint', 'report', 'settings'];

export function parseHash(hash: string): Route {
  const [p, q] = hash.replace(/^#\/?/, '').split('?');
  const name = (ROUTES as readonly string[]).includes(p) ? (p as RouteName) : 'wizard';
  const query: Record<string, string> = {};
  for (const [k, v] of new URLSearchParams(q ?? '')) query[k] = v;
  return { name, query };
}

export function routeHash(r: Route): string {
  const q = new URLSearchParams(r.query).toString();
  return `#/${r.name}${q ? `?${q}` : ''}`;
}

export const useAppStore = defineStore('app', () => {
  const info = ref<ResponseOf<'app.info'> | null>(null);
  const settings = ref<Settings | null>(null);
  const loading = ref(false);
  const error = ref<IpcError | null>(null);
  const connection = ref<ConnectionState>('connecting');
  /** When the event stream went down (null while it is up, or still opening): what the page shows of a run is as of then. */
  const connectionLostAtMs = ref<number | null>(null);
  /**
   * The newest line of a database's once-only upgrade as it opens (database.upgradeProgressed), in
   * the words of the app's first open: the Settings page shows it while it switches to that database.
   */
  const databaseUpgrade = ref<{ databasePath: string; message: string } | null>(null);
  const route = ref<Route>(parseHash(typeof window === 'undefined' ? '' : window.location.hash));
  /**
   * The Settings form's changes not saved yet (each setting that differs from the saved one): kept
   * here, not in the page, so that going to another screen and back does not drop them unsaid.
   */
  const settingsDraft = ref<Partial<Settings>>({});

  /** Settings has changes not saved yet (kept while another screen is shown): leaving the page would lose them. */
  const settingsUnsaved = computed(() => Object.keys(settingsDraft.value).length > 0);

  /**
   * Why `dir` cannot be used, when it is the default cache directory saved in Settings and Settings
   * would refuse that now (app.info's defaultCacheDirProblem: one an older kvbench saved, or a folder
   * that has become a file); else null. A field holding it says so, and where to change it.
   */
  function defaultCacheDirRefusal(dir: string): string | null {
    const i = info.value;
    if (!i?.defaultCacheDirProblem || dir.trim() === '' || dir.trim() !== i.settings.defaultCacheDir.trim()) return null;
    return i.defaultCacheDirProblem;
  }

  /**
   * Why nothing may be written to the open database, or null: it is damaged, and what the app shows is
   * a read-only copy of what could be read (app.info's databaseDamaged), so New suite, Resume, Import
   * and Delete are off, each saying this (the backend refuses them too, DB_CORRUPT).
   */
  const readOnlyReason = computed<string | null>(() => {
    if (info.value?.databaseDamaged) return 'The database is damaged and shown read-only (a copy of what could be read): choose a new database in Settings to run suites, import or delete.';
    // A newer kvbench's database this build may only read: the backend's reason names the kvbench that writes it.
    return info.value?.databaseReadOnly ? `The database is read-only here: ${inAppWords(info.value.databaseReadOnly)}` : null;
  });
  /**
   * The id of the lasting notice that says why (App.vue: DamagedDatabaseNotice, or the newer
   * kvbench's read-only notice), for the disabled buttons' aria-describedby; null while writes are on.
   */
  const readOnlyNoticeId = computed<string | null>(() => (info.value?.databaseDamaged ? 'database-damaged' : info.value?.databaseReadOnly ? 'database-read-only' : null));

  const units = computed<UnitPrefs>(() => (settings.value ? { byteUnits: settings.value.byteUnits, latencyUnit: settings.value.latencyUnit } : DEFAULT_UNITS));

  /**
   * The server accepted this page's token before (it answered app.info) and now refuses it: it was
   * restarted, with a new random token. Only the URL it printed at that start can reach it now.
   */
  const tokenRefused = computed<IpcError | null>(() =>
    connection.value === 'unauthorized' && info.value !== null
      ? {
          code: 'UNAUTHORIZED',
          message:
            "kvbench serve no longer accepts this page's access token: it was restarted with a new one. Open the URL it printed when it started again (it ends in ?token=…); a suite that was running when it stopped is marked interrupted there, and can be resumed from History.",
        }
      : null,
  );

  function setConnection(s: ConnectionState): void {
    connection.value = s;
    if (s === 'connected' || s === 'connecting') connectionLostAtMs.value = null;
    else connectionLostAtMs.value ??= Date.now();
  }

  async function load(): Promise<void> {
    loading.value = true;
    const r = await api().call('app.info', {});
    loading.value = false;
    if (r.ok) {
      info.value = r.value;
      settings.value = r.value.settings;
      error.value = null;
    } else {
      error.value = r.error;
    }
  }

  function navigate(name: RouteName, query: Record<string, string> = {}): void {
    route.value = { name, query };
    const h = routeHash(route.value);
    if (typeof window !== 'undefined' && window.location.hash !== h) window.history.pushState(null, '', h);
  }

  function syncFromLocation(): void {
    route.value = parseHash(window.location.hash);
  }

  async function updateSettings(patch: RequestOf<'settings.update'>): Promise<IpcError | null> {
    const r = await api().call('settings.update', patch);
    if (!r.ok) return r.error;
    settings.value = r.value;
    await load();
    return null;
  }

  /** The damaged database's readable rows saved as a new database at `outPath`, which the app then uses (as a Settings switch): the refusal, or null. */
  async function recoverDatabase(outPath: string): Promise<IpcError | null> {
    const r = await api().call('database.recover', { outPath });
    if (!r.ok) return r.error;
    settings.value = r.value.settings;
    await load();
    return null;
  }

  return { info, settings, settingsDraft, settingsUnsaved, defaultCacheDirRefusal, loading, error, connection, connectionLostAtMs, tokenRefused, databaseUpgrade, readOnlyReason, readOnlyNoticeId, route, units, setConnection, load, navigate, syncFromLocation, updateSettings, recoverDatabase };
});
