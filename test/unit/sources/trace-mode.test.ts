import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { MultiTierCache } from '../../../src-main/engine/cache/multi-tier-cache.ts';
import { IO_TRACE_HEADER, IoTraceLog, partialTracePath, prefixReadPhase } from '../../../src-main/engine/workload/trace/io-trace-log.ts';
import { NullTier } from '../../../src-main/engine/workload/trace/null-tier.ts';
import { removeTempDirs, tempDir } from './helpers.ts';

afterEach(removeTempDirs);

function fixedClock(): () => number {
  let t = 1_700_000_000;
  return () => (t += 0.000001);
}

describe('IoTraceLog', () => {
  it('writes the reference CSV: header, epoch seconds with 6 decimals, tier labels, quoted odd keys', async () => {
    const file = path.join(tempDir(), 'sub', 'dir', 'trace.csv');
    const log = await IoTraceLog.open(file, { clock: fixedClock() });
    log.record({ op: 'Write', tier: 'gpu', key: 'conv_1_turn_1', sizeBytes: 1024, phase: 'Prefill' });
    log.record({ op: 'Read', tier: 'cpu', key: 'a,"b"', sizeBytes: 2048.7, phase: 'Decode' });
    log.record({ op: 'Read', tier: 'storage', key: 'kv_system_x', sizeBytes: 5, phase: 'Both' });
    log.record({ op: 'Write', tier: 'storage', key: 'k', sizeBytes: 7, phase: 'Evict' });
    expect(log.rows).toBe(4);
    expect(await log.close()).toEqual({ path: file, rows: 4, compressed: false, incomplete: null });
    expect(fs.readFileSync(file, 'utf8').split('\n')).toEqual([
      IO_TRACE_HEADER,
      '1700000000.000001,Write,1024,Tier-0,conv_1_turn_1,Prefill',
      '1700000000.000002,Read,2048,Tier-1,"a,""b""",Decode',
      '1700000000.000003,Read,5,Tier-2,kv_system_x,Both',
      '1700000000.000004,Write,7,Tier-2,k,Evict',
      '',
    ]);
  });

  it('writes a zstd stream for a .zst path, with the same content', async () => {
    const dir = tempDir();
    const plain = await IoTraceLog.open(path.join(dir, 't.csv'), { clock: fixedClock() });
    const zst = await IoTraceLog.open(path.join(dir, 't.csv.zst'), { clock: fixedClock() });
    for (let i = 0; i < 50_000; i++) {
      const r = { op: i % 3 ? ('Read' as const) : ('Write' as const), tier: 'storage' as const, key: `user_${i % 97}_req_${i}`, sizeBytes: 131072 * (i % 9), phase: 'Decode' as const };
      plain.record(r);
      zst.record(r);
      if (i % 10_000 === 0) await zst.waitForRoom();
    }
    await plain.close();
    expect((await zst.close()).compressed).toBe(true);
    const raw = fs.readFileSync(path.join(dir, 't.csv.zst'));
    expect(raw.readUInt32LE(0)).toBe(0xfd2fb528); // zstd frame magic
    expect(zlib.zstdDecompressSync(raw).toString('utf8')).toBe(fs.readFileSync(path.join(dir, 't.csv'), 'utf8'));
    expect(raw.length).toBeLessThan(fs.statSync(path.join(dir, 't.csv')).size / 3);
  });

  it('maps a request phase to the reference\'s prefix-read phase', () => {
    expect([prefixReadPhase('prefill_decode'), prefixReadPhase('prefill'), prefixReadPhase('decode')]).toEqual(['Both', 'Prefill', 'Decode']);
  });

  it('writes NAME.partial and renames it once complete: an earlier trace of the name stays until then', async () => {
    const file = path.join(tempDir(), 'trace.csv');
    fs.writeFileSync(file, 'an earlier trace\n');
    const log = await IoTraceLog.open(file, { clock: fixedClock() });
    log.record({ op: 'Write', tier: 'storage', key: 'k', sizeBytes: 7, phase: 'Prefill' });
    expect(fs.readFileSync(file, 'utf8'), 'not truncated when the run starts').toBe('an earlier trace\n');
    expect(fs.existsSync(partialTracePath(file))).toBe(true);
    expect((await log.close()).incomplete).toBeNull();
    expect(fs.readFileSync(file, 'utf8')).toBe(`${IO_TRACE_HEADER}\n1700000000.000001,Write,7,Tier-2,k,Prefill\n`);
    expect(fs.existsSync(partialTracePath(file))).toBe(false);
  });

  it('writes through a symbolic link (renamed onto the file it leads to, the link kept) and refuses a FIFO', async () => {
    const dir = tempDir();
    fs.mkdirSync(path.join(dir, 'traces'));
    const target = path.join(dir, 'traces', 'trace.csv');
    const link = path.join(dir, 'trace.csv');
    fs.symlinkSync(target, link);
    const log = await IoTraceLog.open(link, { clock: fixedClock() });
    log.record({ op: 'Write', tier: 'storage', key: 'k', sizeBytes: 7, phase: 'Prefill' });
    expect((await log.close()).path).toBe(target);
    expect(fs.lstatSync(link).isSymbolicLink()).toBe(true);
    expect(fs.readFileSync(target, 'utf8')).toBe(`${IO_TRACE_HEADER}\n1700000000.000001,Write,7,Tier-2,k,Prefill\n`);
    const fifo = path.join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    await expect(IoTraceLog.open(fifo)).rejects.toThrow(`cannot create the --io-trace-log file ${fifo}: it exists and is not a regular file`);
    expect(fs.statSync(fifo).isFIFO()).toBe(true);
  });

  it('keeps the trace of a run that was aborted or failed as NAME.partial: an earlier whole trace of the name stays', async () => {
    // review (day 2) #3: a run cancelled during its warm-up replaced a 122,364-row trace with 44 lines.
    const file = path.join(tempDir(), 'trace.csv');
    fs.writeFileSync(file, 'an earlier trace\n');
    const log = await IoTraceLog.open(file, { clock: fixedClock() });
    log.record({ op: 'Write', tier: 'storage', key: 'k', sizeBytes: 7, phase: 'Prefill' });
    const summary = await log.close('was aborted before it measured anything');
    expect(summary.path).toBe(partialTracePath(file));
    expect(summary.incomplete).toBe(`the --io-trace-log trace is incomplete: the run was aborted before it measured anything; what was written is kept in ${partialTracePath(file)}`);
    expect(fs.readFileSync(file, 'utf8')).toBe('an earlier trace\n');
    expect(fs.readFileSync(partialTracePath(file), 'utf8')).toBe(`${IO_TRACE_HEADER}\n1700000000.000001,Write,7,Tier-2,k,Prefill\n`);
  });

  it.each(['trace.csv', 'trace.csv.zst'])('when the disk is full (%s), keeps NAME.partial, leaves NAME alone and says the trace is incomplete', async (name) => {
    const dir = tempDir();
    const file = path.join(dir, name);
    fs.writeFileSync(file, 'an earlier trace\n');
    // Every write to /dev/full fails with ENOSPC, as on a full disk.
    fs.symlinkSync('/dev/full', partialTracePath(file));
    const log = await IoTraceLog.open(file, { clock: fixedClock() });
    const failure = new Promise<string>((resolve) => log.onFailure(resolve));
    for (let i = 0; i < 5_000; i++) log.record({ op: 'Read', tier: 'storage', key: `key_${i}`, sizeBytes: 4096, phase: 'Decode' });
    await log.waitForRoom();
    const reason = await failure;

    const summary = await log.close();
    expect(summary).toEqual({ path: partialTracePath(file), rows: 5_000, compressed: name.endsWith('.zst'), incomplete: reason });
    expect(reason).toMatch(/^the --io-trace-log trace is incomplete: writing it failed \(ENOSPC.*\); what was written is kept in .*\.partial$/);
    expect(await log.close(), 'a second close says the same').toBe(summary);
    expect(fs.readFileSync(file, 'utf8')).toBe('an earlier trace\n');
    let late: string | null = null;
    log.onFailure((r) => (late = r));
    expect(late, 'a listener added after the failure hears of it at once').toBe(reason);
  });

  it('reports a file it cannot create', async () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'file'), 'x');
    await expect(IoTraceLog.open(path.join(dir, 'file', 'trace.csv'))).rejects.toMatchObject({ code: 'TARGET_NOT_WRITABLE' });
  });
});

describe('NullTier', () => {
  it('lets the cache place, read, demote and evict without I/O, every timing zero', async () => {
    const gpu = new NullTier('gpu');
    const cpu = new NullTier('cpu');
    const storage = new NullTier('storage');
    const cache = new MultiTierCache([
      { backend: gpu, budgetBytes: 1000 },
      { backend: cpu, budgetBytes: 2000 },
      { backend: storage, budgetBytes: 3000 },
    ]);
    let sourceCalls = 0;
    const source = async () => {
      sourceCalls++;
    };
    for (let i = 0; i < 16; i++) {
      const w = await cache.write({ key: `k${i}`, keyHash: BigInt(i), sizeBytes: 400 }, source);
      expect(w.written).toBe(true);
      expect(w.timing!.durationNs).toBe(0);
      expect(w.timing!.bytes).toBe(400);
    }
    expect(sourceCalls).toBe(0);
    const r = await cache.read('k15', 'user');
    expect(r).toMatchObject({ hit: true, tier: 'gpu' });
    expect(r.timing!.durationNs).toBe(0);
    expect((await cache.read('k0', 'user')).hit).toBe(false); // deleted from the full storage tier
    expect(cache.demotions.get('gpu->cpu')!.count).toBeGreaterThan(0);
    expect(cache.demotions.get('cpu->storage')!.count).toBeGreaterThan(0);
    expect(storage.removes).toBeGreaterThan(0);
    const s = cache.tierStats.get('storage')!;
    expect(s.write.latency.percentileNs(95)).toBeLessThanOrEqual(1);
  });

  it("counts a demotion's bytes on both sides, as real tiers do: a read of the tier left, a write of the one entered", async () => {
    const cpu = new NullTier('cpu');
    const storage = new NullTier('storage');
    const cache = new MultiTierCache([
      { backend: cpu, budgetBytes: 1000 },
      { backend: storage, budgetBytes: 100_000 },
    ]);
    const source = async () => undefined;
    for (let i = 0; i < 6; i++) await cache.write({ key: `k${i}`, keyHash: BigInt(i), sizeBytes: 300 }, source);
    await cache.read('k5', 'user');
    const demoted = cache.demotions.get('cpu->storage')!;
    expect(demoted.count).toBe(4);
    const c = cache.tierStats.get('cpu')!;
    const st = cache.tierStats.get('storage')!;
    expect(c.demotedOutBytes).toBe(demoted.bytes);
    // The review's trace run: read_ops counted the demotions, read_bytes left out their 543,522,816 bytes.
    expect(c.read.ops).toBe(1 + demoted.count);
    expect(c.read.movedBytes).toBe(demoted.bytes);
    expect(c.read.bytes).toBe(300 + demoted.bytes);
    expect(st.write.movedBytes).toBe(demoted.bytes);
    expect(st.demotedInBytes).toBe(demoted.bytes);
  });
});

