// Packaging can only run where Electron can be downloaded; what can be checked here is: the
// electron-builder configuration is valid by electron-builder's own schema, it makes an AppImage
// and a deb with a desktop entry and the icons from resources/, and package.json points Electron
// at the composition root and has the scripts the README names.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';

const REPO = path.resolve(import.meta.dirname, '../../..');
const require = createRequire(import.meta.url);

describe('packaging', () => {
  const config = YAML.parse(fs.readFileSync(path.join(REPO, 'electron-builder.yml'), 'utf8')) as Record<string, any>;

  it('is a valid electron-builder configuration', async () => {
    const { validateConfiguration } = require(path.join(REPO, 'node_modules/app-builder-lib/out/util/config/config.js')) as { validateConfiguration: (c: unknown, l: unknown) => Promise<void> };
    const { DebugLogger } = require(path.join(REPO, 'node_modules/builder-util/out/DebugLogger.js')) as { DebugLogger: new (enabled: boolean) => unknown };
    await expect(validateConfiguration(config, new DebugLogger(false))).resolves.toBeUndefined();
    await expect(validateConfiguration({ ...config, nonsense: 1 }, new DebugLogger(false))).rejects.toThrow(/nonsense/);
  });

  it('makes an AppImage and a deb with a desktop entry and icons from resources/', () => {
    expect(config.linux.target).toEqual(['AppImage', 'deb']);
    expect(config.linux.icon).toBe('resources/icons');
    for (const n of [16, 32, 48, 64, 128, 256, 512]) {
      const png = fs.readFileSync(path.join(REPO, 'resources', 'icons', `${n}x${n}.png`));
      expect(png.subarray(1, 4).toString()).toBe('PNG');
      expect(png.readUInt32BE(16)).toBe(n);
    }
    expect(config.linux.desktop.entry).toMatchObject({ Name: 'kvbench', Categories: expect.stringMatching(/;$/), StartupWMClass: 'kvbench' });
    expect(config.deb.depends).toContain('libnss3');
  });

  it('ships the built front end and the sources Electron runs', () => {
    for (const p of ['out/renderer/**/*', 'out/preload/**/*', 'src-main/**/*', 'src-shared/**/*', 'package.json']) expect(config.files).toContain(p);
    const pkg = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { main: string; scripts: Record<string, string>; dependencies: Record<string, string> };
    expect(fs.existsSync(path.join(REPO, pkg.main))).toBe(true);
    expect(pkg.main).toBe('src-main/app/entry.ts');
    for (const s of ['build:renderer', 'build:preload', 'app', 'package', 'test']) expect(pkg.scripts[s], s).toBeTruthy();
    expect(pkg.scripts.package).toMatch(/electron-builder/);
    // The renderer's libraries are bundled by Vite; the packaged app does not need them at run time.
    for (const d of ['vue', 'pinia', 'chart.js']) expect(pkg.dependencies[d], d).toBeUndefined();
    expect(pkg.dependencies.ws).toBeTruthy();
  });

  it('ships every worker and process source loaded beside its importer (the salvage worker in the main process, the engine\'s), unpacked, with better-sqlite3', () => {
    const root = path.join(REPO, 'src-main');
    const loaded: string[] = [];
    for (const f of fs.readdirSync(root, { recursive: true, encoding: 'utf8' })) {
      if (!f.endsWith('.ts') || f.endsWith('.test.ts')) continue;
      for (const m of fs.readFileSync(path.join(root, f), 'utf8').matchAll(/new URL\('(\.\/[^']+)', import\.meta\.url\)/g)) loaded.push(path.join('src-main', path.dirname(f), m[1]));
    }
    expect(loaded).toContain(path.join('src-main', 'store', 'salvage-worker.ts'));
    for (const f of loaded) {
      expect(fs.existsSync(path.join(REPO, f)), f).toBe(true);
      // Shipped by files' src-main/**/*, not dropped by its exclusions.
      expect(f.startsWith('src-main/') && !f.endsWith('.test.ts') && !f.endsWith('.map'), f).toBe(true);
    }
    expect(config.files).toContain('src-main/**/*');
    // Loaded from disk by Node's ESM loader and by better-sqlite3's native code: never inside an asar.
    expect(config.asar).toBe(false);
    const pkg = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    expect(pkg.dependencies['better-sqlite3']).toBeTruthy();
  });
});
