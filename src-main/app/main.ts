// The desktop app's composition root (Electron main process). It creates the same backend as
// `kvbench serve` (store, hardware detection, planner, suite runner, reports, exports, import) with
// one difference: each trial's engine runs in an Electron utility process. Everything else here is
// the Electron checklist: one instance, a hardened window and session, the app:// protocol, IPC
// with sender checks, crash handling, and the window's size and place kept between runs.
//
// Started by entry.ts (package.json "main"), which turns Node's compile cache on before this file's
// imports load. Runs from its TypeScript source through Electron's Node (type stripping), like the CLI on Node.
import path from 'node:path';
import type * as Electron from 'electron';
import { startEngine } from '../host/engine-host.ts';
import { createBackend, type Backend } from '../server/backend.ts';
import { ENGINE_ENTRY_FILE, PRELOAD_FILE, RENDERER_DIR, APP_ROOT } from '../server/paths.ts';
import { defaultSettings, defaultSettingsFile } from '../server/settings.ts';
import { databaseFlag, startFailureText } from './app-args.ts';
import { registerAppScheme, serveAppProtocol } from './app-protocol.ts';
import { forwardEvents, registerIpcHandlers } from './ipc-handlers.ts';
import { APP_START_URL, hardenSession, hardenWebContents, secureWebPreferences } from './security.ts';
import { utilityProcessTransport, type UtilityProcessApi } from './utility-engine.ts';
import { MIN_HEIGHT, MIN_WIDTH, loadWindowState, restoreWindowState, saveWindowState } from './window-state.ts';

/** The parts of the electron module the app uses (the tests hand in a fake). */
export interface ElectronApi {
  app: Pick<Electron.App, 'requestSingleInstanceLock' | 'quit' | 'exit' | 'whenReady' | 'on' | 'getPath' | 'setAppUserModelId'>;
  BrowserWindow: new (options: Electron.BrowserWindowConstructorOptions) => Electron.BrowserWindow;
  dialog: Pick<Electron.Dialog, 'showMessageBox' | 'showMessageBoxSync' | 'showErrorBox' | 'showSaveDialog'>;
  ipcMain: Pick<Electron.IpcMain, 'handle' | 'removeHandler'>;
  protocol: Pick<Electron.Protocol, 'registerSchemesAsPrivileged' | 'handle'>;
  screen: Pick<Electron.Screen, 'getAllDisplays'>;
  session: { defaultSession: Parameters<typeof hardenSession>[0] };
  utilityProcess: UtilityProcessApi;
}

export interface DesktopOptions {
  rendererDir?: string;
  preloadFile?: string;
  engineEntryFile?: string;
  settingsFile?: string;
  /** The app's command line, for its `--db` (default: process.argv). */
  argv?: readonly string[];
  log?: (level: 'info' | 'warn' | 'error', message: string) => void;
}

export interface DesktopApp {
  backend: Backend;
  window(): Electron.BrowserWindow | null;
}

const ICON_FILE = path.join(APP_ROOT, 'resources', 'icons', '512x512.png');

/**
 * The question the window asks when its page would lose changes (Settings not saved) by a reload, a
 * close or a quit. Electron shows no dialog for a page's beforeunload (it only cancels the unload):
 * the main process asks, and "Leave" lets the unload go on. "Stay" is the default and the cancel.
 */
export const LEAVE_UNSAVED_DIALOG = {
  type: 'warning',
  title: 'kvbench',
  message: 'Leave without saving the Settings changes?',
  detail: 'The changes made on the Settings page are not saved yet: they are lost if the window closes or reloads.',
  buttons: ['Leave', 'Stay'],
  defaultId: 1,
  cancelId: 1,
} as const satisfies Electron.MessageBoxSyncOptions;

/** What each export format is called in the save dialog's filter. */
const EXPORT_FILTERS: Record<string, string> = { csv: 'CSV', xlsx: 'Excel workbook', json: 'JSON' };

/**
 * Asks where to save an export (the backend's chooseExportFile): the save dialog, on the window if
 * there is one, offering `fileName` in the user's Downloads folder; null where it was closed.
 */
export async function chooseExportFile(dialog: Pick<Electron.Dialog, 'showSaveDialog'>, window: Electron.BrowserWindow | null, downloadsDir: string, fileName: string): Promise<string | null> {
  const extension = path.extname(fileName).slice(1);
  const options: Electron.SaveDialogOptions = {
    title: 'Save the export',
    defaultPath: path.join(downloadsDir, fileName),
    filters: [{ name: EXPORT_FILTERS[extension] ?? extension, extensions: [extension] }],
    properties: ['createDirectory', 'showOverwriteConfirmation'],
  };
  const r = window && !window.isDestroyed() ? await dialog.showSaveDialog(window, options) : await dialog.showSaveDialog(options);
  return r.canceled || !r.filePath ? null : r.filePath;
}

export async function runDesktopApp(e: ElectronApi, opts: DesktopOptions = {}): Promise<DesktopApp | null> {
  const log = opts.log ?? ((level, message) => process.stderr.write(`kvbench app: ${level}: ${message}\n`));
  const rendererDir = opts.rendererDir ?? RENDERER_DIR;
  const preloadFile = opts.preloadFile ?? PRELOAD_FILE;
  const engineEntryFile = opts.engineEntryFile ?? ENGINE_ENTRY_FILE;

  const db = databaseFlag(opts.argv ?? process.argv);
  if (!db.ok) {
    log('error', db.error);
    e.dialog.showErrorBox('kvbench: cannot start', `${db.error}\n\nUsage: kvbench app [--db PATH] [electron flags]`);
    e.app.exit(1);
    return null;
  }

  // One instance: a second launch focuses the first window (one database writer, one suite at a time).
  if (!e.app.requestSingleInstanceLock()) {
    e.app.quit();
    return null;
  }
  registerAppScheme(e.protocol); // before ready

  process.on('uncaughtException', (err) => {
    log('error', `uncaught: ${err.stack ?? err.message}`);
    e.dialog.showErrorBox('kvbench: unexpected error', `${err.message}\n\nThe app keeps running; stored results are safe.`);
  });

  await e.app.whenReady();
  e.app.setAppUserModelId?.('io.kvbench.app');
  hardenSession(e.session.defaultSession, (m) => log('warn', m));
  serveAppProtocol(e.protocol, rendererDir);
  e.app.on('web-contents-created', (_event, contents) => hardenWebContents(contents, (m) => log('warn', m)));

  const stateFile = path.join(e.app.getPath('userData'), 'window-state.json');
  let win: Electron.BrowserWindow | null = null;
  // Until the backend is ready: the window's title says what the start-up does, not the page's <title>.
  let starting = true;

  const createWindow = (): Electron.BrowserWindow => {
    const state = restoreWindowState(loadWindowState(stateFile), e.screen.getAllDisplays().map((d) => d.workArea));
    const w = new e.BrowserWindow({
      ...state.bounds,
      minWidth: MIN_WIDTH,
      minHeight: MIN_HEIGHT,
      show: false,
      title: 'kvbench',
      backgroundColor: '#f4f5f8',
      icon: ICON_FILE,
      autoHideMenuBar: true,
      webPreferences: secureWebPreferences(preloadFile),
    });
    if (state.maximized) w.maximize();
    w.once('ready-to-show', () => w.show());
    w.on('page-title-updated', (event) => {
      if (starting) event.preventDefault();
    });
    w.on('close', () => saveWindowState(stateFile, { bounds: w.getNormalBounds(), maximized: w.isMaximized() }));
    // The page's beforeunload (changes not saved) held a reload or a close: asked here, synchronously, as Electron requires.
    w.webContents.on('will-prevent-unload', (event) => {
      if (e.dialog.showMessageBoxSync(w, LEAVE_UNSAVED_DIALOG) === 0) event.preventDefault();
    });
    w.on('closed', () => {
      if (win === w) win = null;
    });
    w.on('unresponsive', () => {
      void e.dialog
        .showMessageBox(w, { type: 'warning', title: 'kvbench', message: 'The kvbench window is not responding.', buttons: ['Wait', 'Reload'], defaultId: 0 })
        .then((r) => {
          if (r.response === 1 && !w.isDestroyed()) w.webContents.reload();
        });
    });
    w.webContents.on('render-process-gone', (_event, details) => {
      log('error', `the window's renderer is gone: ${details.reason} (exit code ${details.exitCode})`);
      if (details.reason === 'clean-exit' || w.isDestroyed()) return;
      void e.dialog
        .showMessageBox(w, {
          type: 'error',
          title: 'kvbench',
          message: 'The kvbench window crashed.',
          detail: `Reason: ${details.reason}. A running suite goes on in the background; reload to watch it again.`,
          buttons: ['Reload', 'Quit'],
          defaultId: 0,
        })
        .then((r) => {
          if (w.isDestroyed()) return;
          if (r.response === 0) w.webContents.reload();
          else e.app.quit();
        });
    });
    void w.loadURL(APP_START_URL);
    return w;
  };

  // The window opens before the database does: the first open after an upgrade may fill thousands
  // of imported trials' records (seconds), and a desktop user has no terminal to see why nothing
  // shows. Meanwhile the page says it is connecting, its requests wait for the backend, and the
  // window's title carries what the start-up says.
  win = createWindow();
  const transport = utilityProcessTransport(e.utilityProcess, engineEntryFile, (m) => log('warn', m));
  const backendReady = createBackend({
    mode: 'electron',
    settingsFile: opts.settingsFile ?? defaultSettingsFile(),
    // As kvbench serve: --db, then the database chosen in Settings, then KVBENCH_DB (in the defaults).
    defaults: defaultSettings(),
    databasePath: db.databasePath,
    startEngine: (options, o) => startEngine(options, { ...o, transport }),
    // Exports are written straight to the file the user chooses, never handed to the page.
    chooseExportFile: (fileName) => chooseExportFile(e.dialog, win, e.app.getPath('downloads'), fileName),
    log: (level, message) => {
      log(level, message);
      if (starting && level === 'info' && win && !win.isDestroyed()) win.setTitle(`kvbench — ${message}`);
    },
  });
  registerIpcHandlers(e.ipcMain, { invoke: async (channel, request) => (await backendReady).invoke(channel, request) }, { log: (m) => log('warn', m) });
  e.app.on('second-instance', () => {
    if (!win) {
      win = createWindow();
      return;
    }
    if (win.isMinimized()) win.restore();
    win.focus();
  });
  e.app.on('activate', () => {
    if (!win) win = createWindow();
  });
  e.app.on('child-process-gone', (_event, details) => {
    // Engine crashes are reported per trial by the engine host; this is the record in the app's log.
    if (details.type === 'Utility') log('warn', `utility process ${details.name ?? ''} gone: ${details.reason} (exit code ${details.exitCode})`);
  });
  e.app.on('window-all-closed', () => e.app.quit());

  const backend = await backendReady;
  starting = false;
  if (win && !win.isDestroyed()) win.setTitle('kvbench');
  forwardEvents(backend, () => win?.webContents ?? null);

  let closing = false;
  e.app.on('before-quit', (event) => {
    if (closing) return;
    event.preventDefault();
    // The window closes first: a page with changes not saved asks, and "Stay" leaves the app as it
    // was (a quit that closed the backend first would leave a window without one). Once it is closed,
    // window-all-closed quits again, and this goes on.
    if (win && !win.isDestroyed()) {
      win.close();
      return;
    }
    closing = true;
    // A running suite stops gracefully (the current trial's partial results are kept), then the database closes.
    void backend
      .close()
      .catch((err: Error) => log('error', `closing: ${err.message}`))
      .finally(() => e.app.quit());
  });

  return { backend, window: () => win };
}

/**
 * Starts the app on Electron's API, as the main process's entry (entry.ts) does, without waiting for
 * it: Electron emits `ready`, which the app waits for, only once the entry has finished evaluating.
 * What the app does before its first wait (the one-instance lock, the app:// scheme) happens now,
 * before `ready`, as Electron requires. A failed start says why on stderr and exits 1.
 */
export function startDesktopApp(api: ElectronApi): void {
  runDesktopApp(api).catch((err: unknown) => {
    process.stderr.write(startFailureText(err, process.argv));
    api.app.exit(1);
  });
}
