// Two ranks of a multi-host run, as mpirun starts them: the same command line, the rank in the
// environment, one shared cache directory and one output name. Each rank must keep to its own
// subdirectory, seed and results file, --start-at must line their windows up, and kvbench merge must
// add them up over the window they shared.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { explain, makeTempDir, oneLayerRunFlags, readResults, removeTempDirs, runCli } from './cli-harness.ts';

afterEach(removeTempDirs);

describe('kvbench run under Open MPI, then kvbench merge', () => {
  it('runs each rank apart on shared storage and merges them over their common window', { timeout: 180_000 }, async () => {
    const tmp = makeTempDir();
    const shared = path.join(tmp, 'shared');
    fs.mkdirSync(shared);
    fs.writeFileSync(path.join(shared, 'keep.txt'), 'not kvbench\n');
    // Time for both CLIs to start before the agreed moment: 12 s is plenty on a quiet machine, but a
    // loaded 2-core one has taken longer. A rank that was not ready says by how much it missed the
    // moment; the pair then runs again with that much more (twice over), so the test never depends on
    // the load and costs more only when a rank was late.
    let marginS = 12;
    let startAt = 0;
    let ranks: Awaited<ReturnType<typeof runCli>>[] = [];
    for (let attempt = 1; ; attempt++) {
      startAt = Math.ceil(Date.now() / 1000) + marginS;
      const args = [
        'run', ...oneLayerRunFlags(tmp), '--num-users', '4', '--duration', '3', '--cpu-mem-gb', '0', '--cache-dir', shared,
        '--seed', '42', '--start-at', String(startAt), '--output', path.join(tmp, 'r.json'),
      ];
      for (const rank of [0, 1]) fs.rmSync(path.join(tmp, `r.rank${rank}.json`), { force: true });
      ranks = await Promise.all(
        [0, 1].map((rank) => runCli(args, { cwd: tmp, env: { OMPI_COMM_WORLD_RANK: String(rank), OMPI_COMM_WORLD_SIZE: '2' } })),
      );
      const lateS = ranks.map((r) => /--start-at \d+ passed ([\d.]+) s before this run was ready/.exec(r.stderr)).map((m) => (m ? Number(m[1]) : 0));
      if (Math.max(...lateS) === 0 || attempt === 3) break;
      marginS += 2 * Math.ceil(Math.max(...lateS)) + 5;
    }
    for (const [rank, r] of ranks.entries()) {
      expect(r.code, explain(r)).toBe(0);
      expect(r.stderr).toContain(`info: rank ${rank} of 2 (from OMPI_COMM_WORLD_RANK (Open MPI)): cache dir ${path.join(shared, `rank-${rank}`)}, seed ${42 + rank}`);
      expect(r.stderr, 'the rank was ready before --start-at').not.toMatch(/--start-at \d+ passed/);
    }
    const results = [0, 1].map((rank) => readResults(path.join(tmp, `r.rank${rank}.json`)));
    expect(results.map((r) => r.kvbench.rank)).toEqual([0, 1].map((rank) => ({ rank, world_size: 2, host: expect.any(String) })));
    expect(results.map((r) => r.kvbench.effective_seed)).toEqual([42, 43]);
    expect(results[0].kvbench.request_stream_digest).not.toBe(results[1].kvbench.request_stream_digest);
    // The two ranks share the file system's free space: each plans on half of 95 % of it, not all of it.
    for (const r of results) {
      const st = r.kvbench.tiers.storage;
      expect(st.budget_bytes).toBe(Math.floor((st.free_bytes_at_start! * 0.95) / 2));
    }
    // Both started at --start-at: their windows open within a small fraction of a second of it.
    for (const r of results) expect(Math.abs(r.kvbench.measured_window.started_unix_ns / 1e9 - startAt)).toBeLessThan(0.5);
    // The shared directory is as it was: each rank removed its own subdirectory, nothing else.
    expect(fs.readdirSync(shared)).toEqual(['keep.txt']);

    const merged = path.join(tmp, 'merged.json');
    const m = await runCli(['merge', path.join(tmp, 'r.rank0.json'), path.join(tmp, 'r.rank1.json'), '--output', merged], { cwd: tmp });
    expect(m.code, explain(m)).toBe(0);
    expect(m.stdout).toMatch(/^Multi-host run: 2 of 2 ranks, COMPLETE/);
    const out = JSON.parse(fs.readFileSync(merged, 'utf8')).kvbench_merge;
    const perRank = results.map((r) => r.kvbench.tier_bytes.storage.read_bytes + r.kvbench.tier_bytes.storage.write_bytes);
    const mergedBytes = out.totals.storage_read_bytes + out.totals.storage_write_bytes;
    // The common window is nearly all of each window, so nearly all bytes; never more than all.
    expect(mergedBytes).toBeLessThanOrEqual(perRank[0] + perRank[1] + 1);
    expect(mergedBytes).toBeGreaterThan(0.8 * (perRank[0] + perRank[1]));
    expect(out.common_window.duration_ns).toBeGreaterThan(0.8 * 3e9);
    expect(out.latency.end_to_end.count).toBe(results[0].kvbench.latency.end_to_end.count + results[1].kvbench.latency.end_to_end.count);

    // The merged file has the reference's keys for the whole run, and is stored as one trial.
    const file = JSON.parse(fs.readFileSync(merged, 'utf8'));
    expect(file.requests_completed).toBe(results[0].requests_completed + results[1].requests_completed);
    expect(file.kvbench_merge.counts.requests_issued).toBe(results[0].kvbench.requests_issued + results[1].kvbench.requests_issued);
    const stored = await runCli(['import', merged, '--system', 'shared', '--db', path.join(tmp, 'k.db')], { cwd: tmp });
    expect(stored.code, explain(stored)).toBe(0);
    expect(stored.stdout).toMatch(/^imported .*merged\.json: trial 1, kvbench, complete$/m);
    const history = await runCli(['history', '--db', path.join(tmp, 'k.db')], { cwd: tmp });
    expect(history.stdout).toMatch(/^\s+1 .* shared +— +multi-host +1 +complete/m); // no --drive: the drive column says —
    // One rank alone is not the run.
    const one = await runCli(['merge', path.join(tmp, 'r.rank0.json')], { cwd: tmp });
    expect(one.code).toBe(1);
    expect(one.stderr).toContain('rank(s) 1 of 2 missing');
    // Nor is it a trial of the system: the store refuses a rank file.
    const imp = await runCli(['import', path.join(tmp, 'r.rank0.json'), '--system', 'shared', '--db', path.join(tmp, 'k.db')], { cwd: tmp });
    expect(imp.code).not.toBe(0);
    expect(imp.stderr).toMatch(/rank 0 of 2 of a multi-host run: one host's share, not a trial of the system; combine the ranks with kvbench merge/);
    // And the merge never writes over one of its inputs.
    const before = fs.readFileSync(path.join(tmp, 'r.rank1.json'), 'utf8');
    const over = await runCli(['merge', path.join(tmp, 'r.rank0.json'), path.join(tmp, 'r.rank1.json'), '--output', path.join(tmp, 'r.rank1.json')], { cwd: tmp });
    expect(over.code).toBe(1);
    expect(over.stderr).toContain(`--output names the input file ${path.join(tmp, 'r.rank1.json')}, which the merge would overwrite`);
    expect(fs.readFileSync(path.join(tmp, 'r.rank1.json'), 'utf8')).toBe(before);
  });
});
