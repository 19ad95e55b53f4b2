// A small stand-in for the `electron` module (Electron cannot run here): enough of app,
// BrowserWindow, ipcMain/ipcRenderer, contextBridge, protocol, session, dialog, screen and
// utilityProcess to drive the main process and the preload, and to record what they did.
// Used with vi.mock('electron', () => createFakeElectron()) or handed to runDesktopApp directly.
import { fork, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';

export interface FakeFrame {
  url: string;
  parent: FakeFrame | null;
}

export class FakeWebContents extends EventEmitter {
  sent: { channel: string; args: unknown[] }[] = [];
  destroyed = false;
  reloads = 0;
  windowOpenHandler: ((details: { url: string }) => { action: string }) | null = null;
  mainFrame: FakeFrame = { url: 'app://kvbench/index.html', parent: null };
  /** Test helper: the page's beforeunload asks to stay (it has changes not saved). */
  pageHoldsUnload = false;
  /**
   * The page's beforeunload, as Electron runs it before a reload or a close: true when the unload goes
   * on (the page does not hold it, or a will-prevent-unload listener called preventDefault).
   */
  beforeUnload(): boolean {
    if (!this.pageHoldsUnload) return true;
    const ev = { defaultPrevented: false, preventDefault() { this.defaultPrevented = true; } };
    this.emit('will-prevent-unload', ev);
    return ev.defaultPrevented;
  }
  send(channel: string, ...args: unknown[]): void {
    this.sent.push({ channel, args });
  }
  isDestroyed(): boolean {
    return this.destroyed;
  }
  reload(): void {
    if (this.beforeUnload()) this.reloads += 1;
  }
  setWindowOpenHandler(h: (details: { url: string }) => { action: string }): void {
    this.windowOpenHandler = h;
  }
}

export class FakeBrowserWindow extends EventEmitter {
  static instances: FakeBrowserWindow[] = [];
  /** Set by createFakeElectron: Electron's app emits window-all-closed when the last window is closed. */
  static onAllClosed: (() => void) | null = null;
  options: Record<string, unknown>;
  webContents = new FakeWebContents();
  loadedUrl: string | null = null;
  /** Every title set after the constructor's, in order. */
  titles: string[] = [];
  shown = false;
  focused = 0;
  destroyed = false;
  constructor(options: Record<string, unknown>) {
    super();
    this.options = options;
    FakeBrowserWindow.instances.push(this);
  }
  async loadURL(url: string): Promise<void> {
    this.loadedUrl = url;
  }
  show(): void {
    this.shown = true;
  }
  setTitle(title: string): void {
    this.titles.push(title);
  }
  focus(): void {
    this.focused += 1;
  }
  isMinimized(): boolean {
    return false;
  }
  restore(): void {}
  maximize(): void {}
  isMaximized(): boolean {
    return false;
  }
  isDestroyed(): boolean {
    return this.destroyed;
  }
  /** As Electron's: 'close' (which may be prevented), the page's beforeunload, then 'closed' and, for the last window, window-all-closed. */
  close(): void {
    if (this.destroyed) return;
    const ev = { defaultPrevented: false, preventDefault() { this.defaultPrevented = true; } };
    this.emit('close', ev);
    if (ev.defaultPrevented || !this.webContents.beforeUnload()) return;
    this.destroyed = true;
    this.webContents.destroyed = true;
    this.emit('closed');
    if (FakeBrowserWindow.instances.every((w) => w.destroyed)) FakeBrowserWindow.onAllClosed?.();
  }
  getNormalBounds(): { x: number; y: number; width: number; height: number } {
    return { x: 10, y: 20, width: 1280, height: 800 };
  }
}

type Handler = (event: { senderFrame: FakeFrame | null }, ...args: unknown[]) => unknown;

export function createFakeElectron(o: { singleInstance?: boolean; userData?: string } = {}) {
  const appEvents = new EventEmitter();
  const handlers = new Map<string, Handler>();
  const rendererListeners = new EventEmitter();
  const exposed: Record<string, unknown> = {};
  const calls: string[] = [];
  const protocolHandlers = new Map<string, (req: { url: string }) => Promise<Response> | Response>();
  const privileged: unknown[] = [];
  const dialogs: { type: string; args: unknown[] }[] = [];
  let dialogResponse = 0;
  /** The file the save dialog answers (null: closed without one). */
  let savePath: string | null = null;
  let permissionRequest: ((wc: unknown, permission: string, cb: (ok: boolean) => void) => void) | null = null;
  let permissionCheck: (() => boolean) | null = null;
  let beforeRequest: ((details: { url: string }, cb: (r: { cancel: boolean }) => void) => void) | null = null;
  let quitCount = 0;

  const app = Object.assign(appEvents, {
    requestSingleInstanceLock: () => o.singleInstance ?? true,
    quit: () => {
      quitCount += 1;
      calls.push('app.quit');
      const ev = { defaultPrevented: false, preventDefault() { this.defaultPrevented = true; } };
      appEvents.emit('before-quit', ev);
      if (!ev.defaultPrevented) calls.push('app.quitted');
    },
    exit: (code: number) => calls.push(`app.exit ${code}`),
    whenReady: async () => {
      calls.push('app.whenReady');
    },
    getPath: (name: string) => (name === 'userData' ? (o.userData ?? '/tmp') : '/tmp'),
    setAppUserModelId: () => {},
    get quitCount() {
      return quitCount;
    },
  });

  const ipcMain = {
    handle(channel: string, h: Handler) {
      if (handlers.has(channel)) throw new Error(`second handler for ${channel}`);
      handlers.set(channel, h);
    },
    removeHandler(channel: string) {
      handlers.delete(channel);
    },
  };

  /** Calls a registered handler as a page in `frame` would. */
  async function invokeFrom(frame: FakeFrame | null, channel: string, request: unknown): Promise<unknown> {
    const h = handlers.get(channel);
    if (!h) throw new Error(`no handler for ${channel}`);
    return h({ senderFrame: frame }, request);
  }

  const ipcRenderer = {
    invoke: (channel: string, request: unknown) => invokeFrom({ url: 'app://kvbench/index.html', parent: null }, channel, request),
    on: (channel: string, l: (...args: unknown[]) => void) => rendererListeners.on(channel, l),
    removeListener: (channel: string, l: (...args: unknown[]) => void) => rendererListeners.removeListener(channel, l),
    /** Test helper: what main's webContents.send would deliver, with a raw-looking IPC event. */
    deliver: (channel: string, data: unknown) => rendererListeners.emit(channel, { sender: 'the ipcRenderer itself', ports: [] }, data),
    listenerCount: (channel: string) => rendererListeners.listenerCount(channel),
  };

  const contextBridge = {
    exposeInMainWorld(key: string, api: unknown) {
      exposed[key] = api;
    },
  };

  const protocol = {
    registerSchemesAsPrivileged(schemes: unknown[]) {
      calls.push('protocol.registerSchemesAsPrivileged');
      privileged.push(...schemes);
    },
    handle(scheme: string, h: (req: { url: string }) => Promise<Response> | Response) {
      calls.push(`protocol.handle ${scheme}`);
      protocolHandlers.set(scheme, h);
    },
  };

  const session = {
    defaultSession: {
      setPermissionRequestHandler: (h: typeof permissionRequest) => (permissionRequest = h),
      setPermissionCheckHandler: (h: typeof permissionCheck) => (permissionCheck = h),
      webRequest: { onBeforeRequest: (h: typeof beforeRequest) => (beforeRequest = h) },
    },
  };

  FakeBrowserWindow.onAllClosed = () => appEvents.emit('window-all-closed');

  const dialog = {
    showErrorBox: (...args: unknown[]) => dialogs.push({ type: 'error-box', args }),
    showMessageBoxSync: (...args: unknown[]) => {
      dialogs.push({ type: 'message-box-sync', args });
      return dialogResponse;
    },
    showMessageBox: async (...args: unknown[]) => {
      dialogs.push({ type: 'message-box', args });
      return { response: dialogResponse, checkboxChecked: false };
    },
    showSaveDialog: async (...args: unknown[]) => {
      dialogs.push({ type: 'save-dialog', args });
      return savePath === null ? { canceled: true, filePath: '' } : { canceled: false, filePath: savePath };
    },
  };

  const screen = { getAllDisplays: () => [{ workArea: { x: 0, y: 0, width: 1920, height: 1080 } }] };

  /** Utility processes as Node children running the same entry file (they speak process.send instead of parentPort). */
  const forked: { entry: string; options: Record<string, unknown>; child: ChildProcess }[] = [];
  const utilityProcess = {
    fork(entry: string, _args: string[] = [], options: { env?: Record<string, string>; serviceName?: string } = {}) {
      const child = fork(entry, [], { env: options.env, stdio: ['ignore', 'pipe', 'pipe', 'ipc'], serialization: 'advanced', execArgv: [] });
      forked.push({ entry, options: options as Record<string, unknown>, child });
      const up = new EventEmitter() as EventEmitter & { pid?: number; stdout: unknown; stderr: unknown; postMessage(m: unknown): void; kill(): boolean };
      up.stdout = child.stdout;
      up.stderr = child.stderr;
      up.postMessage = (m: unknown) => {
        if (child.connected) child.send(m as never);
      };
      // Electron's kill() (UtilityProcessWrapper::Kill): nothing before spawn or after exit, else
      // SIGTERM, and base::EnsureProcessTerminated's SIGKILL if the process is still there 2 s later.
      let ensureTerminated: ReturnType<typeof setTimeout> | undefined;
      up.kill = () => {
        if (up.pid === undefined) return false;
        child.kill('SIGTERM');
        ensureTerminated ??= setTimeout(() => child.kill('SIGKILL'), 2_000).unref();
        return true;
      };
      // As Electron does (UtilityProcessWrapper): pid is set just before 'spawn', and cleared just
      // before 'exit' is emitted, so an 'exit' listener never sees it.
      child.on('spawn', () => {
        up.pid = child.pid;
        up.emit('spawn');
      });
      child.on('message', (m) => up.emit('message', m));
      child.on('close', (code, signal) => {
        clearTimeout(ensureTerminated);
        up.pid = undefined;
        up.emit('exit', code ?? (signal ? 1 : 0));
      });
      return up;
    },
  };

  return {
    app,
    BrowserWindow: FakeBrowserWindow,
    ipcMain,
    ipcRenderer,
    contextBridge,
    protocol,
    session,
    dialog,
    screen,
    utilityProcess,
    // test helpers
    handlers,
    invokeFrom,
    exposed,
    calls,
    privileged,
    protocolHandlers,
    dialogs,
    forked,
    setDialogResponse: (n: number) => (dialogResponse = n),
    setSavePath: (p: string | null) => (savePath = p),
    permission: () => ({ request: permissionRequest, check: permissionCheck, beforeRequest }),
  };
}

export type FakeElectron = ReturnType<typeof createFakeElectron>;
