// The Electron main process's entry (package.json "main") turns Node's compile cache on, with the
// helper the CLI, the engine and the drive probe use, before the app's modules load, and then starts
// the app: here on the fake electron, as the other app tests run it.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MainProcessStart } from '../../../src-main/app/entry.ts';
import { removeTempDirs, tempDir } from '../store/fixtures.ts';
import { createFakeElectron, FakeBrowserWindow } from './fake-electron.ts';

const REPO = path.resolve(import.meta.dirname, '../../..');
const mainEntry = (): string => (JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { main: string }).main;

let dir: string;
let listenersBefore: NodeJS.UncaughtExceptionListener[];
const saved = { KVBENCH_DB: process.env.KVBENCH_DB, XDG_DATA_HOME: process.env.XDG_DATA_HOME };

beforeEach(() => {
  dir = tempDir('kvb-entry-');
  // The app's database and settings, where it finds them by default.
  process.env.KVBENCH_DB = path.join(dir, 'kvbench.db');
  process.env.XDG_DATA_HOME = dir;
  FakeBrowserWindow.instances = [];
  listenersBefore = process.listeners('uncaughtException');
});
afterEach(() => {
  for (const l of process.listeners('uncaughtException')) if (!listenersBefore.includes(l)) process.off('uncaughtException', l);
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  removeTempDirs();
});

describe('the main process entry (package.json "main")', () => {
  it('imports nothing before the compile cache but its helper (util/compile-cache.ts): the app comes after, by a dynamic import', () => {
    const text = fs.readFileSync(path.join(REPO, mainEntry()), 'utf8');
    // Imports that load a module (`import type` is erased).
    const loaded = [...text.matchAll(/^import\s+(?!type\s)[^'"]*?from\s+['"]([^'"]+)['"]|^import\s+['"]([^'"]+)['"]/gm)].map((m) => m[1] ?? m[2]);
    expect(loaded).toEqual(['../util/compile-cache.ts']);
  });

  it('turns the compile cache on, then loads the app and electron, and starts the app on it without waiting for it', async () => {
    const { startMainProcess } = (await import(pathToFileURL(path.join(REPO, mainEntry())).href)) as { startMainProcess?: (start: MainProcessStart) => Promise<void> };
    expect(startMainProcess, `${mainEntry()} exports startMainProcess`).toBeTypeOf('function');
    const fake = createFakeElectron({ userData: dir });
    const order: string[] = [];
    await startMainProcess!({
      enableCompileCache: () => order.push('compile cache'),
      loadApp: async () => {
        order.push('app');
        return import('../../../src-main/app/main.ts');
      },
      // The ESM namespace of the electron package (CommonJS): its API is the default export.
      loadElectron: async () => {
        order.push('electron');
        return { default: fake };
      },
    });
    expect(order).toEqual(['compile cache', 'app', 'electron']);
    // Started before it returned (the scheme is registered before ready), not finished: it waits for ready.
    expect(fake.calls.indexOf('protocol.registerSchemesAsPrivileged')).toBeLessThan(fake.calls.indexOf('app.whenReady'));
    while (FakeBrowserWindow.instances[0]?.titles.at(-1) !== 'kvbench') await new Promise((r) => setTimeout(r, 5));
    expect(FakeBrowserWindow.instances).toHaveLength(1);
    expect(fs.existsSync(process.env.KVBENCH_DB!)).toBe(true);
    fake.app.quit();
    while (!fake.calls.includes('app.quitted')) await new Promise((r) => setTimeout(r, 10));
  });
});
