// bench/gpu-copy-bandwidth.ts end to end against the stub libcuda, with a stand-in for the torch
// script (its numbers are the test's choice): the ≥ 90 % verdict per direction and chunk size, the
// "staging not pinned" refusal, and a torch side that hangs. The stub's own bandwidth means nothing.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildStubLibcuda, hasCc } from './stub-libcuda.ts';
import { skippedBecause } from '../../support/skip.ts';

const hasPython = spawnSync('python3', ['--version']).status === 0;
const bench = fileURLToPath(new URL('../../../bench/gpu-copy-bandwidth.ts', import.meta.url));

describe.skipIf(skippedBecause(!hasCc, 'no C compiler (cc) to build the stub libcuda: bench/gpu-copy-bandwidth.ts is not tested'))('bench/gpu-copy-bandwidth.ts on the stub libcuda', () => {
  let dir: string;

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvbench-gpu-bw-'));
    buildStubLibcuda(dir);
  });
  afterAll(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** A "python" that answers as torch_pinned_copy.py would, with these GB/s, or runs `body` instead. */
  function fakePython(
    name: string,
    gbps: { h2dAlloc: number; h2dInto: number; d2h: number; chunked?: { chunk_bytes: number; h2d_gbps: number; d2h_gbps: number }[] } | null,
    body = '',
  ): string {
    const p = path.join(dir, name);
    const json =
      gbps &&
      JSON.stringify({
        ok: true, torch_version: 'fake', cuda_version: '0', device_name: 'stub', verified: true,
        h2d_alloc_gbps: gbps.h2dAlloc, h2d_into_gbps: gbps.h2dInto, d2h_into_gbps: gbps.d2h,
        ...(gbps.chunked ? { chunked: gbps.chunked } : {}),
      });
    fs.writeFileSync(p, `#!/bin/sh\n${body}\n${json ? `echo '${json}'` : ''}\n`);
    fs.chmodSync(p, 0o755);
    return p;
  }

  function runBench(python: string, extraEnv: Record<string, string> = {}, extraArgs: string[] = []) {
    const json = path.join(dir, `out-${path.basename(python)}.json`);
    const r = spawnSync(
      process.execPath,
      [bench, '--entry-mib', '1', '--total-gib', String(4 / 1024), '--chunk-mib', '0.25,0.5', '--budget-gib', String(16 / 1024), '--reps', '2', '--copy-threads', '1', '--python', python, '--json', json, ...extraArgs],
      { encoding: 'utf8', timeout: 60_000, env: { ...process.env, LD_LIBRARY_PATH: dir, STUB_CUDA_MEMORY_MIB: '2048', ...extraEnv } },
    );
    const result = fs.existsSync(json) ? (JSON.parse(fs.readFileSync(json, 'utf8')) as Record<string, any>) : null;
    return { status: r.status, stdout: r.stdout, stderr: r.stderr, result };
  }

  it('judges each direction and chunk size against torch (H2D against the better torch variant) and prints one verdict line', () => {
    // Torch far slower than anything the stub does: every cell passes.
    const slow = runBench(fakePython('slow-torch', { h2dAlloc: 0.001, h2dInto: 0.002, d2h: 0.001 }));
    expect(slow.status, slow.stderr).toBe(0);
    // The verdict says what it covers: the tier's copy path, not a run's GPU tier under load.
    expect(slow.stdout).toMatch(
      /^CRITERION gpu-copy: PASS \(kvbench tier's copy path ≥ 90 % of torch per direction and chunk size; no source\/sink work, one entry and one direction at a time\): 0\.25 MiB H2D [\d.]+ D2H [\d.]+, 0\.5 MiB H2D/m,
    );
    const c = slow.result!.criterion;
    expect(c.status).toBe('PASS');
    expect(Object.keys(c.perChunk)).toEqual(['0.25 MiB', '0.5 MiB']);
    for (const cell of Object.values(c.perChunk) as { h2d: any; d2h: any }[]) {
      expect(cell.h2d).toMatchObject({ torchGbps: 0.002, pass: true });
      expect(cell.h2d.ratio).toBeCloseTo(cell.h2d.kvbenchGbps / 0.002, 6);
      expect(cell.d2h).toMatchObject({ torchGbps: 0.001, pass: true });
    }
    // Every sample was printed as it was taken.
    expect(slow.stdout.match(/^rep \d, kvbench tier, /gm)).toHaveLength(4);
    expect(slow.stdout.match(/^rep \d, torch: /gm)).toHaveLength(2);
    // The table: torch measures one D2H, shown once; per-copy rows say they are no link rate.
    const row = (label: string): string | undefined => slow.stdout.split('\n').find((l) => l.startsWith(label));
    expect(row('torch .cuda(non_blocking) / copy_ into pinned ')).toMatch(/ 0\.00 \[0\.00–0\.00\]\s+0\.00 \[0\.00–0\.00\]$/);
    expect(row('torch copy_ into preallocated ')).toMatch(/ 0\.00 \[0\.00–0\.00\]\s+— \(same D2H as the row above\)$/);
    expect(slow.result!.samples['torch copy_ into preallocated']).toEqual([{ h2d: 0.002, d2h: null }, { h2d: 0.002, d2h: null }]);
    expect(row('  kvbench tier per copy, 0.25 MiB chunks (copies in flight share the link: not a link rate) ')).toMatch(/GB|\d/);
    expect(slow.stdout).not.toMatch(/per-copy time only/);

    // Torch far faster: every cell fails.
    const fast = runBench(fakePython('fast-torch', { h2dAlloc: 1e9, h2dInto: 1, d2h: 1e9 }));
    expect(fast.stdout).toMatch(/^CRITERION gpu-copy: FAIL /m);
    expect(fast.result!.criterion.perChunk['0.25 MiB'].h2d).toMatchObject({ torchGbps: 1e9, pass: false });
  });

  it('shows further copy-thread counts and torch\'s chunked copies as diagnostics, never in the verdict', () => {
    const MiB = 1024 * 1024;
    // Torch slower than the stub whole, but its chunked copies are at half its whole-entry speed.
    const python = fakePython('chunked-torch', {
      h2dAlloc: 0.001, h2dInto: 0.002, d2h: 0.001,
      chunked: [{ chunk_bytes: 0.25 * MiB, h2d_gbps: 0.001, d2h_gbps: 0.0005 }, { chunk_bytes: 0.5 * MiB, h2d_gbps: 0.002, d2h_gbps: 0.001 }],
    });
    const r = runBench(python, {}, ['--copy-threads', '1,2']);
    expect(r.status, r.stderr + r.stdout).toBe(0);
    expect(r.result!.copyThreads).toBe(1);
    expect(r.result!.diagnosticCopyThreads).toEqual([2]);
    // The diagnostic tier rows were measured every repetition for each chunk size, with their thread count.
    expect(r.result!.samples['kvbench tier, 0.25 MiB chunks, 2 copy threads (diagnostic)']).toHaveLength(2);
    expect(r.result!.details.filter((d: any) => d.path === 'tier-diagnostic').map((d: any) => d.copyThreads)).toEqual([2, 2, 2, 2]);
    expect(r.result!.samples['torch, 0.5 MiB chunks on one stream (diagnostic)']).toEqual([{ h2d: 0.002, d2h: 0.001 }, { h2d: 0.002, d2h: 0.001 }]);
    // Each repetition takes what the verdict needs first (the judged tier for every chunk size, then
    // torch) and the diagnostics after, so a run cut short by --time-limit-s still compares.
    const order = ['rep 1, kvbench tier, 0.5 MiB chunks: ', 'rep 1, torch: ', 'rep 1, driver direct, 0.25 MiB', 'rep 1, kvbench tier, 0.25 MiB chunks, 2 copy threads'];
    const at = order.map((line) => r.stdout.indexOf(line));
    expect(at.every((i) => i >= 0), r.stdout).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    // The verdict is the first thread count's against torch's whole-entry copies only.
    expect(Object.keys(r.result!.criterion.perChunk)).toEqual(['0.25 MiB', '0.5 MiB']);
    expect(r.result!.criterion.perChunk['0.25 MiB'].d2h.torchGbps).toBe(0.001);
    // The diagnosis: torch's chunked copies against its whole ones (H2D against the better whole variant).
    const d = r.result!.diagnosis['0.25 MiB'];
    expect(d.torchChunkedOverWhole_h2d).toBeCloseTo(0.5, 9);
    expect(d.torchChunkedOverWhole_d2h).toBeCloseTo(0.5, 9);
    expect(Object.keys(d.tierByCopyThreads_h2d)).toEqual(['1', '2']);
    expect([1, 2]).toContain(d.tierBestCopyThreads_d2h);
    expect(r.stdout).toMatch(/^diagnostics \(not judged\):\n {2}0\.25 MiB: torch in 0\.25 MiB chunks vs its whole-entry copies: H2D 0\.50×, D2H 0\.50×; tier by copy threads: H2D 1: [\d.]+, 2: [\d.]+ GB\/s; D2H 1: /m);

    const bad = runBench(python, {}, ['--copy-threads', '2,0']);
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toMatch(/--copy-threads takes positive integers/);
  });

  it.skipIf(skippedBecause(!hasPython, 'no python3: bench/torch_pinned_copy.py is not run'))('runs the real torch_pinned_copy.py (against a stand-in torch) and reads every number it prints', () => {
    const env = { PYTHONPATH: fileURLToPath(new URL('./fixtures/fake-torch', import.meta.url)), PYTHONDONTWRITEBYTECODE: '1' };
    const r = runBench('python3', env);
    expect(r.status, r.stderr + r.stdout).toBe(0);
    expect(r.result!.torchError).toBeNull();
    expect(r.result!.torch).toMatchObject({ ok: true, verified: true, entry_bytes: 1024 * 1024, entries: 4 });
    expect(r.result!.torch.chunked.map((c: any) => c.chunk_bytes)).toEqual([0.25 * 1024 * 1024, 0.5 * 1024 * 1024]);
    expect(r.result!.samples['torch, 0.25 MiB chunks on one stream (diagnostic)']).toHaveLength(2);
    expect(['PASS', 'FAIL']).toContain(r.result!.criterion.status);
    expect(r.result!.criterion.perChunk['0.5 MiB'].h2d.torchGbps).toBeGreaterThan(0);

    // A failure in the chunked diagnostic keeps the criterion's torch numbers.
    const broken = runBench('python3', { ...env, FAKE_TORCH_FAIL_SLICES: '1' });
    expect(broken.status, broken.stderr + broken.stdout).toBe(0);
    expect(broken.result!.torch.chunked_error).toMatch(/slicing refused/);
    expect(broken.stdout).toMatch(/^rep 1, torch, chunked copies \(diagnostic\) FAILED: RuntimeError: slicing refused/m);
    expect(['PASS', 'FAIL']).toContain(broken.result!.criterion.status);
  });

  it('calls the comparison invalid when the tier’s staging could not be pinned', () => {
    const r = runBench(fakePython('torch-for-unpinned', { h2dAlloc: 0.001, h2dInto: 0.001, d2h: 0.001 }), { STUB_CUDA_REFUSE_HOST_REGISTER: '1' });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^CRITERION gpu-copy: INVALID .*staging not pinned/m);
    expect(r.result!.criterion.status).toBe('INVALID');
    expect(r.result!.details.filter((d: any) => d.path === 'tier').every((d: any) => d.pinned === false)).toBe(true);
  });

  it('--time-limit-s: no measurement starts after it, and the verdict line still comes, saying why', () => {
    const r = runBench(fakePython('torch-never-asked', { h2dAlloc: 0.001, h2dInto: 0.001, d2h: 0.001 }), {}, ['--time-limit-s', '0']);
    expect(r.status, r.stderr + r.stdout).toBe(0);
    expect(r.stdout).not.toMatch(/^rep \d/m);
    expect(r.stdout).toMatch(/^CRITERION gpu-copy: NOT MEASURED .*torch not measured: the time limit came first; stopped by --time-limit-s 0 after 0 of 2 repetitions$/m);
    expect(r.result!.criterion).toMatchObject({ status: 'NOT MEASURED', repetitions: 2, repetitionsDone: 0 });
  });

  it('a bench killed mid-run leaves the verdict on the repetitions it finished in its JSON', () => {
    // The second torch run kills the bench (as gpu-check.sh's step limit would), in repetition 2.
    const marker = path.join(dir, 'torch-ran-once');
    const python = fakePython('torch-then-kill', null, `if [ -e ${marker} ]; then kill -9 $PPID; exit 1; fi; touch ${marker}
echo '${JSON.stringify({ ok: true, torch_version: 'fake', cuda_version: '0', device_name: 'stub', verified: true, h2d_alloc_gbps: 0.001, h2d_into_gbps: 0.001, d2h_into_gbps: 0.001 })}'`);
    const r = runBench(python);
    expect(r.status).toBeNull(); // killed
    expect(r.result!.criterion).toMatchObject({ status: 'PASS', repetitions: 2, repetitionsDone: 1 });
    expect(r.result!.criterion.perChunk['0.25 MiB'].d2h).toMatchObject({ torchGbps: 0.001, pass: true });
  });

  it('a torch side that hangs is killed after --torch-timeout-s; the kvbench numbers are kept', () => {
    const r = runBench(fakePython('hanging-torch', null, 'exec sleep 30'), {}, ['--torch-timeout-s', '1']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.result!.torchError).toMatch(/did not finish within 1 s/);
    expect(r.result!.samples['kvbench tier, 0.25 MiB chunks']).toHaveLength(2);
    expect(r.stdout).toMatch(/^CRITERION gpu-copy: NOT MEASURED .*did not finish within 1 s/m);
  });
});
