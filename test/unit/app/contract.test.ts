// The one contract, end to end through Electron's pieces (faked): every channel has a schema, an
// ipcMain handler and a preload function, nothing more; the preload hands the page data, never IPC
// events; every handler checks who sent the request.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { forwardEvents, isTrustedSender, registerIpcHandlers } from '../../../src-main/app/ipc-handlers.ts';
import { CHANNELS, EVENT_CHANNEL, PRELOAD_GLOBAL } from '../../../src-shared/ipc/channels.ts';
import { CONTRACT } from '../../../src-shared/ipc/contract.ts';
import type { AppEvent } from '../../../src-shared/ipc/events.ts';
import { removeTempDirs } from '../store/fixtures.ts';
import { testBackend, type TestBackend } from '../server/backend-harness.ts';
import type { FakeElectron } from './fake-electron.ts';

const holder = vi.hoisted(() => ({ fake: null as FakeElectron | null }));
vi.mock('electron', async () => {
  const { createFakeElectron } = await import('./fake-electron.ts');
  holder.fake = createFakeElectron();
  return holder.fake;
});

let t: TestBackend;
let fake: FakeElectron;
let api: Record<string, unknown>;

beforeAll(async () => {
  t = await testBackend({ mode: 'electron' });
  await import('../../../src-main/app/preload.ts'); // runs against the fake electron
  fake = holder.fake!;
  registerIpcHandlers(fake.ipcMain as never, t.backend);
  api = fake.exposed[PRELOAD_GLOBAL] as Record<string, unknown>;
});
afterAll(async () => {
  await t.backend.close();
  removeTempDirs();
});

describe('the IPC contract', () => {
  it('has exactly one schema, one ipcMain handler and one preload function per channel', () => {
    expect(new Set(CHANNELS).size).toBe(CHANNELS.length);
    expect(Object.keys(CONTRACT).sort()).toEqual([...CHANNELS].sort());
    for (const c of CHANNELS) {
      expect(CONTRACT[c].request, c).toBeDefined();
      expect(CONTRACT[c].response, c).toBeDefined();
      expect(c, 'channel names are area.verb').toMatch(/^[a-z]+\.[a-z][A-Za-z]*$/);
    }
    expect([...fake.handlers.keys()].sort()).toEqual([...CHANNELS].sort());
    expect(Object.keys(api).sort()).toEqual([...CHANNELS, 'subscribe'].sort());
    for (const k of Object.keys(api)) expect(typeof api[k], k).toBe('function');
    expect(Object.isFrozen(api)).toBe(true);
    expect(api).not.toHaveProperty('invoke');
    expect(api).not.toHaveProperty('ipcRenderer');
  });

  it('reaches a backend handler for every channel from the preload (validated: a bad request is VALIDATION, not unknown)', async () => {
    for (const c of CHANNELS) {
      const r = await (api[c] as (req: unknown) => Promise<unknown>)({ bogus: true });
      expect(r, c).toMatchObject({ ok: false, error: { code: 'VALIDATION' } });
    }
    const info = await (api['app.info'] as (req: unknown) => Promise<unknown>)({});
    expect(info).toMatchObject({ ok: true, value: { mode: 'electron', databasePath: t.db } });
  });

  it('carries the real-engine view\'s channels (endpoint.*) to the backend like every other', async () => {
    for (const c of ['endpoint.list', 'endpoint.get', 'endpoint.compare', 'endpoint.export']) expect(CHANNELS, c).toContain(c);
    const call = (c: string, req: unknown) => (api[c] as (r: unknown) => Promise<unknown>)(req);
    expect(await call('endpoint.list', {})).toEqual({ ok: true, value: { labels: [], runs: [] } });
    expect(await call('endpoint.compare', { labelA: 'pcie', labelB: 'c2c' })).toEqual({ ok: false, error: { code: 'NOT_FOUND', message: 'no complete runs for pcie and c2c' } });
    expect(await call('endpoint.get', { id: 1 })).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
    expect(await call('endpoint.export', { format: 'xlsx' })).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
  });

  it('hands subscribers the event data only, never the IPC event, and unsubscribes', () => {
    const got: unknown[] = [];
    const unsubscribe = (api.subscribe as (l: (e: unknown) => void) => () => void)((e) => got.push(e));
    const event: AppEvent = { type: 'history.changed', reason: 'x' };
    fake.ipcRenderer.deliver(EVENT_CHANNEL, event);
    expect(got).toEqual([event]);
    expect(fake.ipcRenderer.listenerCount(EVENT_CHANNEL)).toBe(1);
    unsubscribe();
    expect(fake.ipcRenderer.listenerCount(EVENT_CHANNEL)).toBe(0);
    fake.ipcRenderer.deliver(EVENT_CHANNEL, event);
    expect(got).toHaveLength(1);
    expect(() => (api.subscribe as (l: unknown) => void)('not a function')).toThrow(TypeError);
  });

  it('refuses requests from anything but the app page (sender check in every handler)', async () => {
    const calls: string[] = [];
    const ipc = { handle: (c: string, h: (e: { senderFrame: unknown }, r: unknown) => unknown) => void handlers.set(c, h), removeHandler: (c: string) => void handlers.delete(c) };
    const handlers = new Map<string, (e: { senderFrame: unknown }, r: unknown) => unknown>();
    const dispose = registerIpcHandlers(ipc as never, { invoke: async (c) => (calls.push(c), { ok: true, value: null }) });
    const frames = [
      null,
      { url: 'https://evil.example/', parent: null },
      { url: 'file:///tmp/index.html', parent: null },
      { url: 'app://kvbench.evil/index.html', parent: null },
      { url: 'app://kvbench/index.html', parent: { url: 'app://kvbench/index.html', parent: null } },
    ];
    for (const c of CHANNELS) {
      for (const f of frames) {
        expect(await handlers.get(c)!({ senderFrame: f }, {}), `${c} from ${JSON.stringify(f)}`).toMatchObject({ ok: false, error: { code: 'FORBIDDEN' } });
      }
    }
    expect(calls).toEqual([]);
    expect(await handlers.get('app.info')!({ senderFrame: { url: 'app://kvbench/index.html', parent: null } }, {})).toEqual({ ok: true, value: null });
    expect(isTrustedSender({ url: 'app://kvbench/#/history', parent: null })).toBe(true);
    dispose();
    expect(handlers.size).toBe(0);
  });

  it('forwards backend events to the window while it exists', () => {
    const listeners: ((e: AppEvent) => void)[] = [];
    const wc = { sent: [] as unknown[][], destroyed: false, send(...a: unknown[]) { this.sent.push(a); }, isDestroyed() { return this.destroyed; } };
    forwardEvents({ subscribe: (l) => (listeners.push(l), () => {}) }, () => wc);
    listeners[0]({ type: 'history.changed', reason: 'a' });
    wc.destroyed = true;
    listeners[0]({ type: 'history.changed', reason: 'b' });
    expect(wc.sent).toEqual([[EVENT_CHANNEL, { type: 'history.changed', reason: 'a' }]]);
  });
});
