// The results of kvbench's first runs on a real GPU (an NVIDIA H200, kvbench 0.8.0, bench/device/gpu-check.sh),
// as files: test/fixtures/gpu-h200-*.json, each a whole results file with its timeline cut to 3 points.
//   gpu-only:           --gpu-mem-gb 64, CPU tier off, storage below: 35 GiB demoted GPU → storage.
//   gpu-cpu-storage:    --gpu-mem-gb 8 --cpu-mem-gb 16 --storage-capacity-gb 16: demotions GPU → CPU → storage.
import fs from 'node:fs';
import path from 'node:path';

const FIXTURES = path.join(import.meta.dirname, '../../fixtures');

export type H200Run = 'gpu-only' | 'gpu-cpu-storage';

/** A fresh copy of one run's results (the caller may change it), as `version` of kvbench wrote it (default: its own, 0.8.0). */
export function h200Results(run: H200Run, version?: string): Record<string, unknown> & { kvbench: Record<string, any> } {
  const r = JSON.parse(fs.readFileSync(path.join(FIXTURES, `gpu-h200-${run}.json`), 'utf8'));
  if (version !== undefined) r.kvbench.version = version;
  return r;
}
