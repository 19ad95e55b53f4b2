// The dependency direction, enforced: src-shared is pure (no Node, no DOM, no electron); the
// renderer talks to the backend only through its API object (no src-main, no Node, no electron);
// only src-main/app imports electron, and the engine imports neither electron nor the store.
import fs from 'node:fs';
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

function imports(file: string): string[] {
  const text = fs.readFileSync(path.join(REPO, file), 'utf8');
  const specs: string[] = [];
  const re = /(?:^|[\s;])(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|^\s*import\s+['"]([^'"]+)['"]/gm;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) specs.push(m[1] ?? m[2] ?? m[3]);
  return specs;
}

function offenders(dir: string, exts: readonly string[], bad: (spec: string, file: string) => boolean): string[] {
  return files(dir, exts).flatMap((f) => imports(f).filter((s) => bad(s, f)).map((s) => `${f} imports ${s}`));
}

const resolvesInto = (file: string, spec: string, target: string): boolean => spec.startsWith('.') && path.resolve(REPO, path.dirname(file), spec).startsWith(path.join(REPO, target) + path.sep);

describe('module boundaries', () => {
  it('src-shared imports no Node, DOM, electron or src-main', () => {
    expect(offenders('src-shared', ['.ts'], (s, f) => s.startsWith('node:') || s === 'electron' || resolvesInto(f, s, 'src-main') || resolvesInto(f, s, 'src-renderer'))).toEqual([]);
  });

  it('the renderer reaches the backend only through its API object', () => {
    const bad = offenders('src-renderer', ['.ts', '.vue'], (s, f) => s.startsWith('node:') || s === 'electron' || s === 'ws' || resolvesInto(f, s, 'src-main'));
    expect(bad).toEqual([]);
    // fetch and WebSocket appear only in the browser transport; window.kvbench only in the preload transport's choice.
    for (const f of files('src-renderer', ['.ts', '.vue'])) {
      const text = fs.readFileSync(path.join(REPO, f), 'utf8');
      if (!f.endsWith(path.join('api', 'browser-transport.ts'))) expect(text, f).not.toMatch(/\bfetch\(|new WebSocket\(/);
      if (!/api[\\/](api|preload-transport)\.ts$|env\.d\.ts$/.test(f)) expect(text, f).not.toMatch(/window\.kvbench|\bkvbench\??\.\[/);
    }
  });

  it('only src-main/app imports electron; the engine, store, suite and server never do', () => {
    expect(offenders('src-main', ['.ts'], (s, f) => s === 'electron' && !f.startsWith(path.join('src-main', 'app')))).toEqual([]);
    expect(offenders('src-main/engine', ['.ts'], (s, f) => resolvesInto(f, s, 'src-main/store') || resolvesInto(f, s, 'src-main/app') || resolvesInto(f, s, 'src-main/server'))).toEqual([]);
    // src-main/app imports electron's values only where Electron runs them (types elsewhere).
    const valueImports = files('src-main/app', ['.ts']).filter((f) => /^import\s+\{[^}]*\}\s+from\s+'electron'/m.test(fs.readFileSync(path.join(REPO, f), 'utf8')));
    expect(valueImports).toEqual([path.join('src-main', 'app', 'preload.ts')]);
  });

  it('main-process code uses only erasable TypeScript and .ts relative imports', () => {
    for (const f of [...files('src-main/app', ['.ts']), ...files('src-main/server', ['.ts']), ...files('src-shared/ipc', ['.ts']), path.join('src-main', 'cli', 'serve-command.ts')]) {
      const text = fs.readFileSync(path.join(REPO, f), 'utf8');
      expect(text, f).not.toMatch(/^\s*(export\s+)?(const\s+)?enum\s/m);
      expect(text, f).not.toMatch(/^\s*(export\s+)?namespace\s/m);
      expect(text, f).not.toMatch(/constructor\([^)]*\b(private|public|protected|readonly)\s/);
      for (const s of imports(f)) if (s.startsWith('.')) expect(s, f).toMatch(/\.ts$/);
    }
  });
});
