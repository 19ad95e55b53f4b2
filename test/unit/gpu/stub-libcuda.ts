// Builds test/unit/gpu/fixtures/stub-libcuda.c into a directory as libcuda.so.1, so that both
// koffi.load(path) and a child process with that directory on LD_LIBRARY_PATH find it.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const hasCc = spawnSync('cc', ['--version'], { stdio: 'ignore' }).status === 0;

export function buildStubLibcuda(dir: string): string {
  const stubPath = path.join(dir, 'libcuda.so.1');
  const src = fileURLToPath(new URL('./fixtures/stub-libcuda.c', import.meta.url));
  const r = spawnSync('cc', ['-shared', '-fPIC', '-O2', '-Wall', '-o', stubPath, src, '-lpthread'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`cc failed: ${r.stderr}`);
  return stubPath;
}
