// The reference's I/O modes, end to end through the real CLI on real files: write-only prefill,
// read-only decode over pre-populated entries, preconditioning with a size and thread count, a
// storage capacity, the fsync policy, and read verification on a clean run. Each mode must show in
// the bytes it moved, and what happened before the measured phase must be reported apart from it.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunResults } from '../../../src-shared/domain/results.ts';
import { GIB, TINY_RUN_FLAGS, explain, makeTempDir, readResults, removeTempDirs, runCli, sleepMs, startCli, waitFor } from './cli-harness.ts';

/** Every regular file under dir with its size. */
function filesUnder(dir: string): { file: string; size: number }[] {
  if (!fs.existsSync(dir)) return [];
  return (fs.readdirSync(dir, { recursive: true }) as string[])
    .map((f) => path.join(dir, f))
    .filter((f) => fs.statSync(f, { throwIfNoEntry: false })?.isFile())
    .map((file) => ({ file, size: fs.statSync(file).size }));
}

afterEach(removeTempDirs);

async function run(extra: string[], opts: { users?: number; duration?: number } = {}): Promise<{ res: RunResults; stdout: string }> {
  const tmp = makeTempDir();
  const output = path.join(tmp, 'results.json');
  const r = await runCli(
    [
      'run', ...TINY_RUN_FLAGS, '--num-users', String(opts.users ?? 4), '--duration', String(opts.duration ?? 3), '--cpu-mem-gb', '0',
      '--cache-dir', path.join(tmp, 'cache'), '--seed', '11', '--output', output, ...extra,
    ],
    { cwd: tmp },
  );
  expect(r.code, explain(r)).toBe(0);
  return { res: readResults(output), stdout: r.stdout };
}

describe('kvbench run I/O modes', () => {
  it('--prefill-only never decodes; without reloads and prefixes it only writes; --fsync-policy none is stated', async () => {
    // Prefill-only requests skip decode; like the reference, they still reload earlier turns and read
    // cached prefixes. The reloads are its only decode reads, and decode_bytes_read counts their bytes.
    const plain = await run(['--prefill-only']);
    const reloadHits = plain.res.multi_turn_cache_hits;
    expect(plain.res.summary!.cache_stats.decode_reads).toBe(reloadHits);
    if (reloadHits > 0) expect(plain.res.kvbench.primary.decode_bytes_read).toBeGreaterThan(0);
    else expect(plain.res.kvbench.primary.decode_bytes_read).toBe(0);
    expect(plain.res.kvbench.primary.prefill_bytes_written).toBeGreaterThan(0);
    const { res, stdout } = await run(['--prefill-only', '--disable-multi-turn', '--disable-prefix-caching', '--fsync-policy', 'none']);
    const st = res.kvbench.tier_bytes.storage;
    expect(st.write_bytes).toBeGreaterThan(0);
    expect(st.read_bytes).toBe(0);
    expect(res.kvbench.primary.decode_bytes_read).toBe(0);
    expect(res.kvbench.tiers.storage.fsync_policy).toBe('none');
    expect(stdout).toMatch(/fsync none/);
    expect(res.kvbench.preparation).toEqual({ rag_ingestion: null, decode_only_prepopulation: null, precondition: null });
  });

  it('--decode-only reads pre-populated entries and writes nothing in the measured phase', async () => {
    const users = 3;
    const { res, stdout } = await run(['--decode-only'], { users });
    const kv = res.kvbench;
    const prep = kv.preparation.decode_only_prepopulation!;
    // users × 10 entries of 2,048 tokens and the three system prompts (5 + 9 + 6 tokens), written before the clock started.
    expect(prep.entries).toBe(users * 10 + 3);
    expect(prep.bytes_written).toBe((users * 10 * 2048 + 20) * kv.model.entry_bytes_per_token);
    expect(prep.elapsed_ns).toBeGreaterThan(0);
    expect(kv.tier_bytes.storage.write_bytes).toBe(0);
    expect(kv.tier_bytes.storage.read_bytes).toBeGreaterThan(0);
    expect(kv.primary.decode_bytes_read).toBeGreaterThan(0);
    expect(kv.primary.prefill_bytes_written).toBe(0);
    expect(stdout).toMatch(/Decode-only pre-population \(before the measured phase, not in its statistics\): 33 entries/);
  });

  it('--verify finds a byte flipped in an entry file on the disk, with its key and offset, and counts it', { timeout: 60_000 }, async () => {
    const tmp = makeTempDir();
    const cache = path.join(tmp, 'cache');
    const output = path.join(tmp, 'results.json');
    const cli = startCli(
      ['run', ...TINY_RUN_FLAGS, '--num-users', '1', '--duration', '5', '--cpu-mem-gb', '0', '--decode-only', '--verify', '--cache-dir', cache, '--seed', '5', '--output', output],
      { cwd: tmp },
    );
    // Decode-only writes 10 entries of 2,048 tokens (and 3 system prompts) before its window, then only reads them.
    const entries = () => filesUnder(cache).filter((f) => f.size >= 2048 * 24 * 1024);
    await waitFor('the pre-populated entries', () => entries().length === 10, 30_000);
    await sleepMs(300); // the last entry's fdatasync
    const OFFSET = 5000;
    for (const { file } of entries()) {
      const fd = fs.openSync(file, 'r+');
      const b = Buffer.alloc(1);
      fs.readSync(fd, b, 0, 1, OFFSET);
      b[0] ^= 0xff;
      fs.writeSync(fd, b, 0, 1, OFFSET);
      fs.fsyncSync(fd);
      fs.closeSync(fd);
    }
    const r = await cli.done;
    expect(r.code, explain(r)).toBe(0);
    const v = readResults(output).kvbench.verification;
    expect(v.enabled).toBe(true);
    expect(v.corrupt_chunks).toBeGreaterThan(0);
    expect(v.failures.length).toBeGreaterThan(0);
    for (const f of v.failures) expect(f).toMatchObject({ tier: 'storage', offset_bytes: OFFSET, key: expect.stringMatching(/\S/) });
    expect(r.stdout + r.stderr).toMatch(/corrupt/i);
  });

  it('--precondition with a size and threads fills first, then measures from zero', async () => {
    const sizeGib = 0.25;
    const { res, stdout } = await run(['--precondition', '--precondition-size-gb', String(sizeGib), '--precondition-threads', '3', '--prefill-only']);
    const kv = res.kvbench;
    const pc = kv.preparation.precondition!;
    expect(pc.target_bytes).toBe(sizeGib * GIB);
    expect(pc.threads).toBe(3);
    const entryBytes = 2048 * kv.model.entry_bytes_per_token;
    // Writers stop once the target is reached; each may have one entry in flight beyond it.
    expect(pc.bytes_written).toBeGreaterThanOrEqual(pc.target_bytes);
    expect(pc.bytes_written).toBeLessThanOrEqual(pc.target_bytes + 3 * entryBytes);
    expect(pc.entries * entryBytes).toBe(pc.bytes_written);
    // The measured phase's counters start after the fill: no precondition entry is counted in them.
    expect(kv.tier_bytes.storage.write_bytes).toBeGreaterThan(0);
    // Storage writes of the measured phase are its prefills and system prompts; had the counters
    // not been reset after the fill, the precondition bytes would be among them.
    expect(kv.primary.prefill_bytes_written).toBeGreaterThan(0);
    expect(kv.tier_bytes.storage.write_bytes - kv.primary.prefill_bytes_written).toBeLessThan(pc.bytes_written);
    expect(stdout).toMatch(/Preconditioning \(before the measured phase, not in its statistics\): \d+ entries, .* target 256\.0 MiB, 3 writers/);
  });

  it('--storage-capacity-gb bounds the storage tier, and --verify reads back clean data as clean', async () => {
    // tiny-1b's largest entry (25,000 tokens) is 0.57 GiB: one GiB holds it, and fills up fast.
    const { res, stdout } = await run(['--storage-capacity-gb', '1', '--verify']);
    const kv = res.kvbench;
    expect(kv.tiers.storage.budget_bytes).toBe(GIB);
    expect(kv.tier_bytes.storage.used_bytes_at_end).toBeLessThanOrEqual(GIB);
    expect(kv.verification.enabled).toBe(true);
    expect(kv.tier_bytes.storage.read_bytes).toBeGreaterThan(0);
    expect(kv.verification.corrupt_chunks).toBe(0);
    // "0 corrupt" means something only beside how much was checked: the storage tier's reads.
    expect(kv.verification.checked_chunks).toBeGreaterThan(0);
    expect(kv.verification.checked_bytes_by_tier?.storage).toBeGreaterThan(0);
    expect(stdout).toMatch(/Data verification: on, [\d,]+ chunks \([\d.]+ [KMG]iB\) read back and checked over the whole run \((CPU [\d.]+ [KMG]iB, )?Storage [\d.]+ [KMG]iB\), 0 corrupt/);
  });
});

describe('kvbench run --warm-up', () => {
  it('runs the workload first, then measures a window of exactly --duration', async () => {
    const { res, stdout } = await run(['--warm-up', '2'], { duration: 3 });
    const kv = res.kvbench;
    const w = kv.measured_window;
    expect(w.warm_up_ns).toBe(2e9);
    expect(w.planned_ns).toBe(3e9);
    expect(w.closed_by).toBe('duration');
    expect(kv.elapsed_ns).toBeGreaterThanOrEqual(3e9);
    expect(kv.elapsed_ns).toBeLessThan(3.2e9 + kv.engine_health.event_loop_lag_ns.max); // late by a stalled loop at most
    expect(res.summary!.elapsed_time).toBeCloseTo(kv.elapsed_ns / 1e9, 9);
    // The timeline belongs to the window: it starts after the warm-up.
    expect(kv.timeline.at(-1)!.elapsed_ns).toBeLessThanOrEqual(kv.elapsed_ns);
    // Requests offered during the warm-up are in requests_issued; only the window's completions count.
    expect(kv.requests_issued).toBeGreaterThanOrEqual(res.requests_completed + w.requests_in_flight_at_close);
    expect(kv.tier_bytes.storage.read_bytes + kv.tier_bytes.storage.write_bytes).toBeGreaterThan(0);
    expect(stdout).toMatch(/Measured window: closed by duration/);
  });
});
