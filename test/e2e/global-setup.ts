// Vitest global set-up of the e2e project: the built renderer must exist before `kvbench serve`
// can serve it. Chromium's absence is handled (loudly) by the tests themselves.
import fs from 'node:fs';
import { ensureRendererBuilt } from './build-renderer.ts';

export default async function setup(): Promise<void> {
  if (!fs.existsSync('/usr/bin/chromium')) return;
  const t0 = performance.now();
  const what = await ensureRendererBuilt();
  if (what === 'built') process.stderr.write(`e2e: built the renderer into out/renderer in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
}
