// A small CPU tier in front of storage: entries land in RAM first, the CPU tier stays at or below
// 80 % of its budget by demoting its least-recently-used entries to storage, and demotions are
// counted in both tiers' bytes (a read in the CPU tier, a write in the storage tier).
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { GIB, TINY_RUN_FLAGS, cacheDirWithForeignFile, explain, makeTempDir, oneLayerRunFlags, readResults, removeTempDirs, runCli, snapshotDir } from './cli-harness.ts';
import { expectLatencyProfileHealth } from './storage-health-expectations.ts';

afterEach(removeTempDirs);

const CPU_BUDGET_GIB = 0.25;
// The demotion test's window is 8 completed requests, not 6 s: at load 15 on 2 cores a 6 s window
// held none (PARTIAL, no demotion counted). --duration only caps a machine that is slower still.
vi.setConfig({ testTimeout: 180_000 });

describe('kvbench run --cpu-mem-gb 0.25', () => {
  it('fills the CPU tier, demotes to storage, and counts the demoted bytes in both tiers', async () => {
    const tmp = makeTempDir();
    const { cacheDir } = cacheDirWithForeignFile(tmp);
    const before = snapshotDir(cacheDir);
    const output = path.join(tmp, 'results.json');
    const r = await runCli(
      [
        'run',
        ...TINY_RUN_FLAGS,
        '--num-users', '4',
        '--max-requests', '8',
        '--duration', '60',
        '--cpu-mem-gb', String(CPU_BUDGET_GIB),
        '--cache-dir', cacheDir,
        '--seed', '7',
        '--output', output,
      ],
      { cwd: tmp },
    );
    expect(r.code, explain(r)).toBe(0);
    expect(snapshotDir(cacheDir)).toEqual(before);

    const res = readResults(output);
    const kv = res.kvbench;
    const cs = res.summary!.cache_stats as Record<string, number>;
    expect(kv.status).toBe('complete');

    expect(kv.tiers.cpu).toMatchObject({ present: true, budget_bytes: CPU_BUDGET_GIB * GIB, reason: null });
    // What the tier really held in RAM: the part of its arena ever used, the arena being the budget
    // plus an eighth (at least two chunks), and no chunk that found no room in it.
    const arenaBytes = CPU_BUDGET_GIB * GIB + Math.max((CPU_BUDGET_GIB * GIB) / 8, 2 * kv.engine_health.io_chunk_bytes);
    expect(kv.tiers.cpu).toMatchObject({ arena_bytes: arenaBytes, arena_overflow_chunks: 0 });
    expect(kv.tiers.cpu.peak_held_bytes).toBeGreaterThan(0);
    expect(kv.tiers.cpu.peak_held_bytes).toBeLessThanOrEqual(arenaBytes);
    // The engine's memory, by kind: the buffers it reserved, and each kind's peak (at least one sample).
    const memory = kv.engine_health.memory!;
    expect(memory.fixed_buffers.cpu_tier_arena_bytes).toBe(arenaBytes);
    expect(memory.fixed_buffers.storage_io_buffers_bytes).toBe(kv.engine_health.io_depth * kv.engine_health.io_chunk_bytes);
    expect(memory.sampled_peak!.rss_bytes).toBeGreaterThan(0);
    expect(memory.sampled_peak!.rss_bytes).toBeLessThanOrEqual(kv.engine_health.peak_rss_bytes);
    expect(kv.timeline.at(-1)!.rss_bytes).toBeGreaterThan(0);
    expect(kv.tiers.gpu.present).toBe(false);

    const cpu = kv.tier_bytes.cpu;
    const storage = kv.tier_bytes.storage;
    const demotion = kv.demotions['cpu->storage'];
    expect(demotion, 'a cpu->storage demotion record').toBeDefined();
    expect(demotion.count).toBeGreaterThan(0);
    expect(demotion.bytes).toBeGreaterThan(0);
    expect(kv.latency.demotion['cpu->storage'].count).toBe(demotion.count);

    expect(cpu.write_bytes).toBeGreaterThan(0);
    expect(cs.tier_cpu_kv_bytes_written_gb).toBeGreaterThan(0);
    expect(Math.abs(cs.tier_cpu_kv_bytes_written_gb * GIB - cpu.write_bytes)).toBeLessThanOrEqual(1);
    // A demotion leaves the CPU tier and enters the storage tier: its bytes on both sides, counted chunk
    // by chunk as the tier bytes are, so one in flight at the close adds the chunks it moved to the
    // finished demotions' bytes.
    expect(cpu.demoted_out_bytes).toBeGreaterThanOrEqual(demotion.bytes);
    expect(storage.demoted_in_bytes).toBeGreaterThanOrEqual(demotion.bytes);
    expect(cpu.demoted_out_bytes).toBeGreaterThanOrEqual(storage.demoted_in_bytes);
    expect(storage.write_bytes, 'storage writes include the demoted bytes').toBeGreaterThanOrEqual(demotion.bytes);
    expect(cpu.read_bytes, 'CPU reads include the demoted bytes').toBeGreaterThanOrEqual(demotion.bytes);
    expect(storage.write_ops).toBeGreaterThanOrEqual(demotion.count);
    expect(cs.offloads_storage).toBe(storage.write_ops);
    // Every write in the CPU tier placed an entry there: nothing sits above it to demote into it, and
    // nothing is promoted without --promotion.
    expect(kv.promotion.moves).toEqual({});
    expect(cs.offloads_cpu).toBeGreaterThan(0);
    expect(cs.offloads_cpu).toBe(cpu.write_ops);
    // The storage-health criteria, with the CPU tier's among them.
    expectLatencyProfileHealth(res);
    // The reference's totals are request-level: the tiers' counters less the demotions between them
    // (whole operations, counted when they complete, as the demotion record is).
    expect(cs.read_iops).toBe(cpu.read_ops + storage.read_ops - demotion.count);
    expect(cs.write_iops).toBe(cpu.write_ops + storage.write_ops - demotion.count);
    expect(cs.read_iops, 'every hit is one request-level read').toBe(cs.cache_hits);
    // Bytes count chunk by chunk: a demotion still in flight when the window closed moved some bytes
    // but is not in the record. Its victim was still in the CPU tier, so such bytes are under its budget.
    for (const [dir, total] of [['read', cs.total_read_bytes], ['write', cs.total_write_bytes]] as const) {
      const cutOffBytes = cpu[`${dir}_bytes`] + storage[`${dir}_bytes`] - demotion.bytes - total;
      expect(cutOffBytes, `total_${dir}_bytes leaves out the demoted bytes`).toBeGreaterThanOrEqual(0);
      expect(cutOffBytes).toBeLessThan(CPU_BUDGET_GIB * GIB);
    }
    expect(cs.read_write_ratio).toBeCloseTo(cs.total_read_bytes / cs.total_write_bytes, 12);
    // Each tier's hits: its reads less what demotions read out of it (nothing is promoted), counted as
    // the reads are; the tiers' hits together are the request-level total.
    expect(cpu.hit_read_bytes).toBe(cpu.read_bytes - cpu.demoted_out_bytes);
    expect(storage.hit_read_bytes).toBe(storage.read_bytes - storage.demoted_out_bytes);
    expect(kv.tier_bytes.gpu.hit_read_bytes + cpu.hit_read_bytes + storage.hit_read_bytes).toBe(cs.total_read_bytes);

    // The CPU tier kept within its budget: 80 % of it, except that a nearly empty tier (under 5 %)
    // takes one entry of up to 95 % (the reference's rule; tiny-1b's coding users make such entries),
    // so the bound here is the budget and the 80 % rule is the cache unit tests'. (Its contents at the
    // end are not reconciled with the byte counters here: those stop when the measured window closes,
    // mid-operation; the cache's unit tests check that every byte written lives in exactly one tier.)
    expect(cpu.used_bytes_at_end).toBeLessThanOrEqual(CPU_BUDGET_GIB * GIB);
    expect(cs.cpu_entries).toBe(cpu.entries_at_end);
    expect(Math.abs(cs.cpu_memory_used_gb * GIB - cpu.used_bytes_at_end)).toBeLessThanOrEqual(1);
    // Nothing was deleted from storage (its capacity is the free disk space).
    expect(storage.evicted_entries).toBe(0);
  });
});

describe('kvbench run --cpu-mem-gb 0.25, one user, a fixed seed', () => {
  it('moves the bytes kvbench 0.7.0 moved: how the CPU tier lays out its RAM decides nothing', async () => {
    // One user, one request at a time: every cache decision follows from the seed alone. The values are
    // those of 0.7.0 (50de441, a SharedArrayBuffer per chunk), measured before the tier's arena.
    const tmp = makeTempDir();
    const output = path.join(tmp, 'results.json');
    const r = await runCli(
      ['run', ...TINY_RUN_FLAGS, '--num-users', '1', '--max-requests', '30', '--duration', '300', '--cpu-mem-gb', String(CPU_BUDGET_GIB),
        '--storage-capacity-gb', '4', '--cache-dir', path.join(tmp, 'cache'), '--seed', '11', '--output', output],
      { cwd: tmp },
    );
    expect(r.code, explain(r)).toBe(0);
    const res = readResults(output);
    const kv = res.kvbench;
    const bytesOf = (t: 'cpu' | 'storage') => {
      const b = kv.tier_bytes[t];
      return [b.read_bytes, b.read_ops, b.write_bytes, b.write_ops, b.demoted_in_bytes, b.demoted_out_bytes, b.evicted_bytes];
    };
    expect([kv.status, res.requests_completed, kv.requests_issued]).toEqual(['complete', 30, 30]);
    expect(bytesOf('cpu')).toEqual([5_677_596_672, 367, 466_378_752, 33, 0, 275_693_568, 0]);
    expect(bytesOf('storage')).toEqual([694_345_728, 52, 275_693_568, 21, 275_693_568, 0, 0]);
    // The hits: the CPU tier's reads less the 275,693,568 bytes demoted out of it; all of the storage tier's.
    expect([kv.tier_bytes.cpu.hit_read_bytes, kv.tier_bytes.storage.hit_read_bytes]).toEqual([5_401_903_104, 694_345_728]);
    expect([res.summary!.cache_stats.cache_hits, res.summary!.cache_stats.cache_misses]).toEqual([398, 3]);
    expect(kv.tiers.cpu.arena_overflow_chunks).toBe(0);
  });
});

describe('kvbench run --promotion on-hit', () => {
  it('moves entries hit in storage up to the CPU tier, and reports the moves in the JSON and on the console', async () => {
    const tmp = makeTempDir();
    const output = path.join(tmp, 'results.json');
    // Small entries (≤ 6.1 MiB) and a 16 MiB CPU tier: later turns find their context in storage.
    const r = await runCli(
      ['run', ...oneLayerRunFlags(tmp), '--num-users', '6', '--duration', '4', '--cpu-mem-gb', String(16 / 1024), '--cache-dir', path.join(tmp, 'cache'),
        '--promotion', 'on-hit', '--seed', '5', '--output', output],
      { cwd: tmp },
    );
    expect(r.code, explain(r)).toBe(0);
    const res = readResults(output);
    const kv = res.kvbench;
    expect(kv.promotion.policy).toBe('on-hit');
    // A promotion's copy up is a read in storage but no hit of it: the hits leave it out, and still add up to the request-level reads.
    const tb = kv.tier_bytes;
    expect(tb.storage.hit_read_bytes).toBeLessThan(tb.storage.read_bytes - tb.storage.demoted_out_bytes);
    expect(tb.gpu.hit_read_bytes + tb.cpu.hit_read_bytes + tb.storage.hit_read_bytes).toBe(res.summary!.cache_stats.total_read_bytes);
    const up = kv.promotion.moves['storage->cpu'];
    expect(up, `promotions: ${JSON.stringify(kv.promotion)}`).toBeDefined();
    expect(up.count).toBeGreaterThan(0);
    expect(up.bytes).toBeGreaterThan(0);
    expect(up.latency.count).toBe(up.count);
    expect(kv.promotion.failures).toBe(0);
    expect(kv.promotion.first_failure).toBeNull();
    expect(r.stdout).toContain('  Promotions (--promotion on-hit: hit entries moved up a tier, timed apart from their reads):');
    expect(r.stdout).toMatch(new RegExp(`^    storage->cpu: ${up.count.toLocaleString('en-US')} entries, `, 'm'));
  });
});
