// `npm install` / `npm ci` must need no compiler and no nodejs.org (README, .ci/run). npm runs a
// default `node-gyp rebuild` for any installed package with a binding.gyp, no install script of its
// own and no `"gypfile": false` in the package.json npm sees — and during `npm ci` (or an install from
// a fresh clone) the package.json npm sees is package-lock.json's entry, and npm never writes
// `gypfile` there (one added by hand is gone after the next `npm install`). node-gyp then needs
// python3, make and the Node headers from nodejs.org, even when the package ships a prebuilt binary
// and would compile nothing. The one protection that survives lockfile rewrites is a deny in
// package.json's allowScripts (npm 11.16+ skips a denied package's install scripts), so every such
// package must have one.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../../src-main/store/sqlite.ts';

const REPO = path.resolve(import.meta.dirname, '../../..');

interface LockEntry { link?: boolean; hasInstallScript?: boolean }
interface Manifest { scripts?: Record<string, string>; allowScripts?: Record<string, boolean> }

const readJson = <T>(file: string): T => JSON.parse(fs.readFileSync(file, 'utf8')) as T;

/** The installed packages (from package-lock.json, present on disk) that npm would run node-gyp on. */
function gypPackages(): { name: string; location: string; hasPrebuilds: boolean }[] {
  const lock = readJson<{ packages: Record<string, LockEntry> }>(path.join(REPO, 'package-lock.json'));
  const found = [];
  for (const [location, entry] of Object.entries(lock.packages)) {
    if (!location.startsWith('node_modules/') || entry.link) continue;
    const dir = path.join(REPO, location);
    if (!fs.existsSync(path.join(dir, 'binding.gyp'))) continue; // absent: not gyp, or an optional dep for another platform
    const scripts = readJson<Manifest>(path.join(dir, 'package.json')).scripts ?? {};
    if (scripts.install || scripts.preinstall) continue; // npm runs the package's own script, not node-gyp
    const name = location.slice(location.lastIndexOf('node_modules/') + 'node_modules/'.length);
    found.push({ name, location, hasPrebuilds: fs.existsSync(path.join(dir, 'prebuilds')) });
  }
  return found;
}

describe('npm install needs no compiler', () => {
  it('finds better-sqlite3, the package this guard was written for', () => {
    expect(gypPackages().map((p) => p.name)).toContain('better-sqlite3');
  });

  it("denies the install scripts of every package npm would run node-gyp on (package.json's allowScripts)", () => {
    const allowScripts = readJson<Manifest>(path.join(REPO, 'package.json')).allowScripts ?? {};
    const problems = gypPackages()
      .filter((p) => allowScripts[p.name] !== false)
      .map((p) =>
        p.hasPrebuilds
          ? `${p.name} (${p.location}) ships prebuilds/ and a binding.gyp: without a deny, npm ci runs "node-gyp rebuild" on it, ` +
            `which fails without python3, make and nodejs.org. Fix: \`npm deny-scripts ${p.name}\` (adds "${p.name}": false to package.json's allowScripts).`
          : `${p.name} (${p.location}) has a binding.gyp and no prebuilt binary: npm ci compiles it, so "no compiler needed" ` +
            `(README) is no longer true. Use a release with prebuilt binaries, or deny it only if it works without the build.`,
      );
    expect(problems, problems.join('\n')).toEqual([]);
  });

  it('approves or denies every install script in the lockfile, so npm ci names none as unreviewed (npm 11.16+)', () => {
    // Each decision, with its reason, is in the commit that made it and in the README.
    const lock = readJson<{ packages: Record<string, LockEntry> }>(path.join(REPO, 'package-lock.json'));
    const allowScripts = readJson<Manifest>(path.join(REPO, 'package.json')).allowScripts ?? {};
    const withScripts = Object.entries(lock.packages)
      .filter(([location, entry]) => location.startsWith('node_modules/') && entry.hasInstallScript === true)
      .map(([location]) => location.slice(location.lastIndexOf('node_modules/') + 'node_modules/'.length));
    expect(withScripts).toContain('koffi');
    expect(withScripts.filter((name) => typeof allowScripts[name] !== 'boolean')).toEqual([]);
  });

  it.runIf(process.platform === 'linux' && process.arch === 'x64')("loads koffi from its prebuilt package: its install script, denied, is not needed", () => {
    // cnoke --prebuild only checks that this binary loads, and compiles koffi (CMake, a C++ compiler) where it does not.
    expect(readJson<Manifest>(path.join(REPO, 'package.json')).allowScripts?.koffi).toBe(false);
    const koffi = createRequire(import.meta.url)('koffi') as { load?: unknown };
    expect(koffi.load).toBeTypeOf('function');
    const report = process.report.getReport() as unknown as { sharedObjects: string[] };
    const loaded = report.sharedObjects.filter((f) => f.endsWith(`${path.sep}koffi.node`));
    expect(loaded).toHaveLength(1);
    expect(loaded[0]).toMatch(/[/]@koromix[/]koffi-linux-x64[/]linux_x64[/]koffi\.node$/);
  });

  it.runIf(process.platform === 'linux' && process.arch === 'x64')('runs better-sqlite3 on its prebuilt binary, not a compiled one', () => {
    const db = openDatabase(':memory:');
    expect(db.prepare('select 1 as one').get()).toEqual({ one: 1 });
    db.close();
    const report = process.report.getReport() as unknown as { sharedObjects: string[] };
    const loaded = report.sharedObjects.filter((f) => f.includes(`${path.sep}better-sqlite3${path.sep}`));
    expect(loaded).toHaveLength(1);
    expect(loaded[0]).toMatch(/[/]prebuilds[/]linux(musl)?-x64\.node$/);
  });
});
