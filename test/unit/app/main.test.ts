// The desktop app's composition root with a fake electron: one instance, the scheme registered
// before ready, a hardened window on app://, IPC for every channel, events to the window, crash
// handling, window state, and a quit that lets a running suite stop and the database close.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LEAVE_UNSAVED_DIALOG, runDesktopApp, type ElectronApi } from '../../../src-main/app/main.ts';
import { APP_START_URL } from '../../../src-main/app/security.ts';
import { openStore } from '../../../src-main/store/open-store.ts';
import { CHANNELS, EVENT_CHANNEL } from '../../../src-shared/ipc/channels.ts';
import { removeTempDirs, tempDir } from '../store/fixtures.ts';
import { databaseWithUnversionedImports } from '../store/unversioned-imports.ts';
import { seedVariedHistory } from '../store/seed-store.ts';
import { createFakeElectron, FakeBrowserWindow, FakeWebContents, type FakeElectron } from './fake-electron.ts';

let dir: string;
let rendererDir: string;
let listenersBefore: NodeJS.UncaughtExceptionListener[];
const savedDb = process.env.KVBENCH_DB;

beforeEach(() => {
  dir = tempDir('kvb-main-');
  rendererDir = path.join(dir, 'renderer');
  fs.mkdirSync(rendererDir);
  fs.writeFileSync(path.join(rendererDir, 'index.html'), '<!doctype html><title>kvbench</title>');
  process.env.KVBENCH_DB = path.join(dir, 'kvbench.db');
  FakeBrowserWindow.instances = [];
  listenersBefore = process.listeners('uncaughtException');
});
afterEach(() => {
  for (const l of process.listeners('uncaughtException')) if (!listenersBefore.includes(l)) process.off('uncaughtException', l);
  if (savedDb === undefined) delete process.env.KVBENCH_DB;
  else process.env.KVBENCH_DB = savedDb;
  removeTempDirs();
});

async function start(fake: FakeElectron, argv: readonly string[] = ['/opt/kvbench/kvbench']) {
  const logs: string[] = [];
  const desktop = await runDesktopApp(fake as unknown as ElectronApi, {
    argv,
    rendererDir,
    preloadFile: '/app/out/preload/preload.cjs',
    settingsFile: path.join(dir, 'settings.json'),
    log: (level, m) => logs.push(`${level}: ${m}`),
  });
  return { desktop, logs };
}

/** Quits and waits (up to 20 s: closing the store fsyncs, on a disk other tests may be filling) until the app has quit. */
async function quit(fake: FakeElectron): Promise<void> {
  fake.app.quit();
  for (let i = 0; i < 2_000 && !fake.calls.includes('app.quitted'); i++) await new Promise((r) => setTimeout(r, 10));
}

describe('the desktop app (main process)', () => {
  it('allows one instance: a second one quits at once', async () => {
    const fake = createFakeElectron({ singleInstance: false });
    const { desktop } = await start(fake);
    expect(desktop).toBeNull();
    expect(fake.calls).toContain('app.quit');
    expect(FakeBrowserWindow.instances).toHaveLength(0);
  });

  it('opens one hardened window on the app protocol, with IPC for every channel and events forwarded', async () => {
    const fake = createFakeElectron({ userData: dir });
    const { desktop } = await start(fake);
    expect(fake.calls.indexOf('protocol.registerSchemesAsPrivileged')).toBeLessThan(fake.calls.indexOf('app.whenReady'));
    expect(fake.privileged).toEqual([{ scheme: 'app', privileges: expect.objectContaining({ standard: true, secure: true }) }]);
    expect(fake.calls).toContain('protocol.handle app');

    expect(FakeBrowserWindow.instances).toHaveLength(1);
    const win = FakeBrowserWindow.instances[0];
    expect(win.options).toMatchObject({ width: 1280, height: 800, minWidth: 1024, show: false, title: 'kvbench' });
    expect(win.options.webPreferences).toMatchObject({ contextIsolation: true, sandbox: true, nodeIntegration: false, preload: '/app/out/preload/preload.cjs' });
    expect(win.loadedUrl).toBe(APP_START_URL);
    win.emit('ready-to-show');
    expect(win.shown).toBe(true);

    const page = await fake.protocolHandlers.get('app')!({ url: APP_START_URL });
    expect(await page.text()).toContain('<title>kvbench</title>');

    expect([...fake.handlers.keys()].sort()).toEqual([...CHANNELS].sort());
    const info = await fake.invokeFrom(win.webContents.mainFrame, 'app.info', {});
    expect(info).toMatchObject({ ok: true, value: { mode: 'electron', databasePath: process.env.KVBENCH_DB } });
    expect(await fake.invokeFrom({ url: 'https://evil.example/', parent: null }, 'app.info', {})).toMatchObject({ ok: false, error: { code: 'FORBIDDEN' } });

    await fake.invokeFrom(win.webContents.mainFrame, 'settings.update', { latencyUnit: 'us' });
    expect(win.webContents.sent.some((s) => s.channel === EVENT_CHANNEL && (s.args[0] as { type: string }).type === 'settings.changed')).toBe(true);

    // Every web contents gets the navigation and window-open guards.
    const other = new FakeWebContents();
    fake.app.emit('web-contents-created', {}, other);
    let prevented = false;
    other.emit('will-navigate', { preventDefault: () => (prevented = true) }, 'https://example.com/');
    expect(prevented).toBe(true);
    const { request } = fake.permission();
    let granted: boolean | null = null;
    request!(null, 'geolocation', (ok) => (granted = ok));
    expect(granted).toBe(false);

    // A second launch focuses this window.
    fake.app.emit('second-instance');
    expect(win.focused).toBe(1);

    // Closing keeps the window's place.
    win.emit('close');
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'window-state.json'), 'utf8'))).toEqual({ bounds: { x: 10, y: 20, width: 1280, height: 800 }, maximized: false });

    await quit(fake);
    expect(fake.calls.filter((c) => c === 'app.quit')).toHaveLength(3); // the first was held for the window to close, the second for the backend
    expect(desktop!.backend.suiteState).toBe('idle');
    expect(await desktop!.backend.invoke('history.list', { selection: {} })).toMatchObject({ ok: false }); // closed
  });

  it('asks where to save an export (the save dialog, on the window, offering the Downloads folder) and writes it there; a closed dialog writes nothing (s14)', async () => {
    const s = openStore(process.env.KVBENCH_DB!);
    seedVariedHistory(s, 30);
    s.close();
    const fake = createFakeElectron({ userData: dir });
    const { desktop } = await start(fake);
    const out = path.join(dir, 'chosen.csv');
    fake.setSavePath(out);
    const saved = await desktop!.backend.invoke('export.create', { selection: {}, format: 'csv' });
    expect(saved).toMatchObject({ ok: true, value: { delivery: { kind: 'saved', path: out } } });
    const fileName = (saved as { value: { fileName: string } }).value.fileName;
    const asked = fake.dialogs.filter((d) => d.type === 'save-dialog');
    expect(asked).toHaveLength(1);
    expect(asked[0].args[0]).toBe(FakeBrowserWindow.instances[0]);
    expect(asked[0].args[1]).toMatchObject({ defaultPath: path.join('/tmp', fileName), filters: [{ name: 'CSV', extensions: ['csv'] }] });
    const trialCount = (saved as { value: { trialCount: number } }).value.trialCount;
    expect(trialCount).toBeGreaterThan(20);
    expect(fs.readFileSync(out, 'utf8').trimEnd().split('\r\n')).toHaveLength(trialCount + 1);

    fake.setSavePath(null);
    expect(await desktop!.backend.invoke('export.create', { selection: {}, format: 'xlsx' })).toEqual({ ok: true, value: { dismissed: true } });
    expect(fs.readdirSync(dir).filter((f) => f.endsWith('.xlsx'))).toEqual([]);
    await quit(fake);
  });

  it('opens its window before the database, whose once-only upgrade of many imported trials the title then tells', async () => {
    await databaseWithUnversionedImports(process.env.KVBENCH_DB!, 300);
    const fake = createFakeElectron({ userData: dir });
    const starting = start(fake);
    while (FakeBrowserWindow.instances.length === 0) await new Promise((r) => setTimeout(r, 1));
    // The page's requests are taken from the start and answered once the backend is ready.
    expect([...fake.handlers.keys()].sort()).toEqual([...CHANNELS].sort());
    const win = FakeBrowserWindow.instances[0];
    const info = fake.invokeFrom(win.webContents.mainFrame, 'app.info', {});
    const { desktop } = await starting;
    expect(await info).toMatchObject({ ok: true, value: { databasePath: process.env.KVBENCH_DB } });
    expect(win.titles[0]).toMatch(/^kvbench — database .*kvbench\.db: upgrading 300 imported trials' records \(once/);
    expect(win.titles).toContainEqual(expect.stringMatching(/upgraded 300 imported trials' records$/));
    expect(win.titles.at(-1)).toBe('kvbench');
    // Once started, the page's own title is the window's again.
    let prevented = false;
    win.emit('page-title-updated', { preventDefault: () => (prevented = true) }, 'kvbench');
    expect(prevented).toBe(false);
    await quit(fake);
    expect(desktop!.backend.suiteState).toBe('idle');
  });

  it('opens --db over the database chosen in Settings, and that over KVBENCH_DB, as kvbench serve does; --db is not kept', async () => {
    const settingsFile = path.join(dir, 'settings.json');
    const chosen = path.join(dir, 'chosen.db');
    openStore(chosen).close(); // the settings file names only a database that exists (it creates none)
    fs.writeFileSync(settingsFile, `${JSON.stringify({ databasePath: chosen })}\n`);
    const databaseOf = async (argv: readonly string[]): Promise<string> => {
      const fake = createFakeElectron({ userData: dir });
      const { desktop } = await start(fake, argv);
      const opened = desktop!.backend.databasePath;
      await quit(fake);
      return opened;
    };
    expect(process.env.KVBENCH_DB).not.toBe(chosen);
    expect(await databaseOf(['/opt/kvbench/kvbench'])).toBe(chosen);
    const flagged = path.join(dir, 'flagged.db');
    // As `kvbench app --db …` starts it: Electron, the app's folder, then the arguments.
    expect(await databaseOf(['/usr/lib/electron', '/app', '--db', flagged])).toBe(flagged);
    expect(await databaseOf(['/opt/kvbench/kvbench', `--db=${flagged}`, '--no-sandbox'])).toBe(flagged);
    expect(JSON.parse(fs.readFileSync(settingsFile, 'utf8'))).toEqual({ databasePath: chosen });
  });

  it('refuses a --db without a database before anything starts', async () => {
    const fake = createFakeElectron({ userData: dir });
    const { desktop, logs } = await start(fake, ['/opt/kvbench/kvbench', '--db']);
    expect(desktop).toBeNull();
    expect(logs).toEqual(['error: --db needs a value: the database file']);
    expect(fake.calls).toContain('app.exit 1');
    expect(fake.calls).not.toContain('app.whenReady');
    expect(FakeBrowserWindow.instances).toHaveLength(0);
  });

  it('asks before a reload, a close or a quit drops changes the page has not saved, and a quit the user stays from leaves the app whole', async () => {
    const fake = createFakeElectron({ userData: dir });
    const { desktop } = await start(fake);
    const win = FakeBrowserWindow.instances[0];
    const asked = (): number => fake.dialogs.filter((d) => d.type === 'message-box-sync').length;
    // Nothing unsaved: a reload asks nothing.
    win.webContents.reload();
    expect(win.webContents.reloads).toBe(1);
    expect(asked()).toBe(0);

    win.webContents.pageHoldsUnload = true; // Settings has changes not saved: the page's beforeunload holds the unload
    fake.setDialogResponse(1); // Stay
    win.webContents.reload();
    expect(win.webContents.reloads).toBe(1);
    expect(fake.dialogs.at(-1)).toEqual({ type: 'message-box-sync', args: [win, LEAVE_UNSAVED_DIALOG] });
    // A quit asks too; staying keeps the window and the backend (the database still answers).
    fake.app.quit();
    await new Promise((r) => setTimeout(r, 50));
    expect(asked()).toBe(2);
    expect(win.isDestroyed()).toBe(false);
    expect(fake.calls).not.toContain('app.quitted');
    expect(await desktop!.backend.invoke('history.list', { selection: {} })).toMatchObject({ ok: true });

    fake.setDialogResponse(0); // Leave
    win.webContents.reload();
    expect(win.webContents.reloads).toBe(2);
    await quit(fake);
    expect(asked()).toBe(4);
    expect(win.isDestroyed()).toBe(true);
    expect(fake.calls).toContain('app.quitted');
    expect(await desktop!.backend.invoke('history.list', { selection: {} })).toMatchObject({ ok: false }); // closed
  });

  it('offers to reload a crashed window, and records gone utility processes', async () => {
    const fake = createFakeElectron({ userData: dir });
    const { logs } = await start(fake);
    const win = FakeBrowserWindow.instances[0];
    fake.setDialogResponse(0);
    win.webContents.emit('render-process-gone', {}, { reason: 'crashed', exitCode: 139 });
    await new Promise((r) => setTimeout(r, 10));
    expect(fake.dialogs.some((d) => d.type === 'message-box' && JSON.stringify(d.args).includes('crashed'))).toBe(true);
    expect(win.webContents.reloads).toBe(1);
    win.webContents.emit('render-process-gone', {}, { reason: 'clean-exit', exitCode: 0 });
    await new Promise((r) => setTimeout(r, 10));
    expect(win.webContents.reloads).toBe(1);
    fake.app.emit('child-process-gone', {}, { type: 'Utility', name: 'kvbench engine', reason: 'crashed', exitCode: 9 });
    expect(logs.some((l) => /utility process kvbench engine gone: crashed/.test(l))).toBe(true);
    await quit(fake);
  });
});
