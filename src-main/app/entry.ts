// The Electron main process's entry (package.json "main"). It turns Node's compile cache on
// (util/compile-cache.ts, as bin/kvbench.js does for the CLI and the engine's and the drive probe's
// entries do for themselves) before the app's modules load: main.ts, the composition root, imports
// the whole backend (store, suite runner, reports, exports), and a module is compiled into the cache
// only if it loads after the cache is on, so this file imports nothing else before it. The variable
// the helper sets carries the cache on to the utility processes the app starts.
//
// Runs from its TypeScript source through Electron's Node (type stripping), like the CLI on Node.
import { enableCompileCache } from '../util/compile-cache.ts';
import type { ElectronApi } from './main.ts';

/** What starting the main process loads, in this order (the tests hand in a fake electron and their own cache switch). */
export interface MainProcessStart {
  enableCompileCache: () => unknown;
  loadApp: () => Promise<Pick<typeof import('./main.ts'), 'startDesktopApp'>>;
  loadElectron: () => Promise<unknown>;
}

const ELECTRON_START: MainProcessStart = {
  enableCompileCache,
  loadApp: () => import('./main.ts'),
  loadElectron: () => import('electron'),
};

/**
 * The compile cache, then the app's modules and electron, then the app starts. Resolves once it has
 * started, not when it ends: Electron emits `ready`, which the app waits for, only after the entry's
 * top-level await is over (a top-level await of the app itself would never end).
 */
export async function startMainProcess(start: MainProcessStart = ELECTRON_START): Promise<void> {
  start.enableCompileCache();
  const app = await start.loadApp();
  const electron = (await start.loadElectron()) as ElectronApi & { default?: ElectronApi };
  app.startDesktopApp((electron.app ? electron : electron.default) as ElectronApi);
}

// Started by Electron; imported by the tests, which never run it.
if (process.versions.electron && process.type === 'browser') await startMainProcess();
