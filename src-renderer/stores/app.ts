// The app's shell state: what the backend is (app.info), the settings, the event-stream connection
// and the current screen (kept in location.hash so Back and Forward work and a reload stays put).
import { defineStore } from 'pinia';
import { computed, ref } from 'vue';
import type { IpcError, ResponseOf, Settings } from '../../src-shared/ipc/contract.ts';
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
  const route = ref<Route>(parseHash(typeof window === 'undefined' ? '' : window.location.hash));

  const units = computed<UnitPrefs>(() => (settings.value ? { byteUnits: settings.value.byteUnits, latencyUnit: settings.value.latencyUnit } : DEFAULT_UNITS));

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

  async function updateSettings(patch: Partial<Settings>): Promise<IpcError | null> {
    const r = await api().call('settings.update', patch);
    if (!r.ok) return r.error;
    settings.value = r.value;
    await load();
    return null;
  }

  return { info, settings, loading, error, connection, route, units, load, navigate, syncFromLocation, updateSettings };
});
