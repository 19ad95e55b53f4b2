// The end-to-end tests load the built renderer through `kvbench serve`. This builds it (vite build,
// as `npm run build:renderer`) when out/renderer is missing or older than its sources.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const RENDERER_OUT = path.join(REPO_ROOT, 'out', 'renderer');

function newestMtimeMs(dir: string): number {
  let newest = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) newest = Math.max(newest, newestMtimeMs(p));
    else newest = Math.max(newest, fs.statSync(p).mtimeMs);
  }
  return newest;
}

export function rendererIsFresh(): boolean {
  const index = path.join(RENDERER_OUT, 'index.html');
  if (!fs.existsSync(index)) return false;
  const built = fs.statSync(index).mtimeMs;
  const sources = Math.max(
    newestMtimeMs(path.join(REPO_ROOT, 'src-renderer')),
    newestMtimeMs(path.join(REPO_ROOT, 'src-shared')),
    fs.statSync(path.join(REPO_ROOT, 'vite.config.ts')).mtimeMs,
  );
  return built >= sources;
}

export async function ensureRendererBuilt(): Promise<'fresh' | 'built'> {
  if (rendererIsFresh()) return 'fresh';
  const { build } = await import('vite');
  await build({ configFile: path.join(REPO_ROOT, 'vite.config.ts'), root: path.join(REPO_ROOT, 'src-renderer'), logLevel: 'warn' });
  return 'built';
}
