// The dependency direction, enforced: src-shared is pure (no Node, no DOM, no electron, no package
// but zod); the renderer talks to the backend only through its API object (no src-main, no Node, no
// electron, only its UI packages); src-main never imports the renderer; only src-main/app loads
// electron, however it is named (import, require, createRequire); and the engine reaches neither
// electron nor the store, the app, the server or the exports, directly or through what it imports.
// Types can't see most of this (a package's own types bring Node's globals with them), so the test
// reads the imports. src-shared/tsconfig.json (no Node types, no DOM) catches the globals.
import fs from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const REPO = path.resolve(import.meta.dirname, '../../..');

function files(dir: string, exts: readonly string[]): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(path.join(REPO, dir), { withFileTypes: true })) {
    const rel = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...files(rel, exts));
    else if (exts.some((x) => e.name.endsWith(x))) out.push(rel);
  }
  return out;
}

const read = (file: string): string => fs.readFileSync(path.join(REPO, file), 'utf8');

function imports(file: string): string[] {
  const text = read(file);
  const specs: string[] = [];
  const re = /(?:^|[\s;])(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|^\s*import\s+['"]([^'"]+)['"]/gm;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) specs.push(m[1] ?? m[2] ?? m[3]);
  return specs;
}

function offenders(dir: string, exts: readonly string[], bad: (spec: string, file: string) => boolean): string[] {
  return files(dir, exts).flatMap((f) => imports(f).filter((s) => bad(s, f)).map((s) => `${f} imports ${s}`));
}

const resolvesInto = (file: string, spec: string, target: string): boolean => spec.startsWith('.') && path.resolve(REPO, path.dirname(file), spec).startsWith(path.join(REPO, target) + path.sep);

// Every Node builtin by name: `fs` is as much Node as `node:fs` (and `node:sqlite` exists only prefixed).
const NODE_BUILTINS = new Set(builtinModules.map((m) => m.replace(/^node:/, '')));
const isNodeBuiltin = (spec: string): boolean => spec.startsWith('node:') || NODE_BUILTINS.has(spec);

/** The package a bare specifier names (`@scope/pkg/sub` → `@scope/pkg`); null for a relative one. */
function packageOf(spec: string): string | null {
  if (spec.startsWith('.') || spec.startsWith('/')) return null;
  const parts = spec.split('/');
  return spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** A Node builtin, or a package outside the folder's list (a package's types can bring Node along). */
function foreignImport(spec: string, allowed: readonly string[]): boolean {
  const pkg = packageOf(spec);
  return isNodeBuiltin(spec) || (pkg !== null && !allowed.includes(pkg));
}

// electron named as a call's argument: require('electron'), createRequire(url)('electron'), import('electron/main').
const LOADS_ELECTRON = /\(\s*(['"`])electron(?:\/[^'"`]*)?\1\s*\)/;

const ENGINE = path.join('src-main', 'engine');
// What the engine may reach through its relative imports: itself, the shared code, and the small
// Node helpers below everything else. Not the store, the app, the server, the exports, the suite or the CLI.
const ENGINE_MAY_REACH = ['src-shared', ENGINE, path.join('src-main', 'util'), path.join('src-main', 'hardware'), path.join('src-main', 'host')];

/** Every file the engine reaches through relative imports, each with the chain that reaches it. */
function engineClosure(): Map<string, string[]> {
  const chains = new Map<string, string[]>();
  const queue = files(ENGINE, ['.ts']).map((f) => [f]);
  while (queue.length > 0) {
    const chain = queue.shift()!;
    const file = chain[chain.length - 1];
    if (chains.has(file)) continue;
    chains.set(file, chain);
    if (!fs.existsSync(path.join(REPO, file))) continue; // reported below
    for (const s of imports(file)) if (s.startsWith('.')) queue.push([...chain, path.relative(REPO, path.resolve(REPO, path.dirname(file), s))]);
  }
  return chains;
}

describe('module boundaries', () => {
  it('src-shared imports no Node, electron, src-main, renderer, nor any package but zod', () => {
    const bad = offenders('src-shared', ['.ts'], (s, f) => foreignImport(s, ['zod']) || resolvesInto(f, s, 'src-main') || resolvesInto(f, s, 'src-renderer'));
    expect(bad).toEqual([]);
  });

  it('the renderer reaches the backend only through its API object', () => {
    const bad = offenders('src-renderer', ['.ts', '.vue'], (s, f) => foreignImport(s, ['vue', 'pinia', 'chart.js']) || resolvesInto(f, s, 'src-main'));
    expect(bad).toEqual([]);
    // fetch and WebSocket appear only in the browser transport; window.kvbench only in the preload transport's choice.
    for (const f of files('src-renderer', ['.ts', '.vue'])) {
      const text = read(f);
      if (!f.endsWith(path.join('api', 'browser-transport.ts'))) expect(text, f).not.toMatch(/\bfetch\(|new WebSocket\(/);
      if (!/api[\\/](api|preload-transport)\.ts$|env\.d\.ts$/.test(f)) expect(text, f).not.toMatch(/window\.kvbench|\bkvbench\??\.\[/);
    }
  });

  it('src-main never imports the renderer', () => {
    expect(offenders('src-main', ['.ts'], (s, f) => resolvesInto(f, s, 'src-renderer'))).toEqual([]);
  });

  it('only src-main/app loads electron, by import, require or createRequire', () => {
    const app = path.join('src-main', 'app') + path.sep;
    const everywhere = [...files('src-main', ['.ts']), ...files('src-shared', ['.ts']), ...files('src-renderer', ['.ts', '.vue'])].filter((f) => !f.startsWith(app));
    const bad = everywhere.flatMap((f) => [
      ...imports(f).filter((s) => packageOf(s) === 'electron').map((s) => `${f} imports ${s}`),
      ...(LOADS_ELECTRON.test(read(f)) ? [`${f} requires electron`] : []),
    ]);
    expect(bad).toEqual([]);
    // src-main/app imports electron's values only where Electron runs them (types elsewhere).
    const valueImports = files('src-main/app', ['.ts']).filter((f) => /^import\s+\{[^}]*\}\s+from\s+'electron'/m.test(read(f)));
    expect(valueImports).toEqual([path.join('src-main', 'app', 'preload.ts')]);
  });

  it('the engine reaches neither the store, app, server nor exports, nor electron or SQLite, even through what it imports', () => {
    const closure = engineClosure();
    const outside = [...closure].filter(([f]) => !ENGINE_MAY_REACH.some((d) => f.startsWith(d + path.sep))).map(([, chain]) => chain.join(' → '));
    expect(outside).toEqual([]);
    const missing = [...closure.keys()].filter((f) => !fs.existsSync(path.join(REPO, f)));
    expect(missing).toEqual([]);
    const packages = [...closure.keys()].flatMap((f) => imports(f).filter((s) => packageOf(s) === 'electron' || packageOf(s) === 'better-sqlite3').map((s) => `${closure.get(f)!.join(' → ')} imports ${s}`));
    expect(packages).toEqual([]);
  });

  it('main-process code uses only erasable TypeScript and .ts relative imports', () => {
    for (const f of [...files('src-main/app', ['.ts']), ...files('src-main/server', ['.ts']), ...files('src-shared/ipc', ['.ts']), path.join('src-main', 'cli', 'serve-command.ts')]) {
      const text = read(f);
      expect(text, f).not.toMatch(/^\s*(export\s+)?(const\s+)?enum\s/m);
      expect(text, f).not.toMatch(/^\s*(export\s+)?namespace\s/m);
      expect(text, f).not.toMatch(/constructor\([^)]*\b(private|public|protected|readonly)\s/);
      for (const s of imports(f)) if (s.startsWith('.')) expect(s, f).toMatch(/\.ts$/);
    }
  });
});
