import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { WorkloadFileSchema, type WorkloadGenerateParams } from '../../../src-shared/domain/workload-file.ts';
import { parseWorkloadGenerateArgs, warmupNote } from '../../../src-main/cli/workload-command.ts';
import { createWorkloadSource } from '../../../src-main/engine/workload/sources/create-source.ts';
import { generateWorkload, readWorkloadFile, warmupRepeats, WORKLOAD_GENERATE_DEFAULTS } from '../../../src-main/engine/workload/sources/workload-file.ts';
import { makeCtx, removeTempDirs, takeAll, tempDir } from './helpers.ts';

afterEach(removeTempDirs);

const SEED_STUDY: WorkloadGenerateParams = {
  ...WORKLOAD_GENERATE_DEFAULTS,
  contexts: [32768, 65536],
  batches_per_context: 5,
  batch_sizes: [8, 16, 32],
  prompt_pool_size: 16,
  reuse_start_batch: 3,
  delay_ms: 0,
  seed: 42,
};

describe('kvbench workload generate', () => {
  it('is deterministic from the seed, and another seed gives another workload', () => {
    const a = generateWorkload(SEED_STUDY);
    expect(JSON.stringify(generateWorkload(SEED_STUDY))).toBe(JSON.stringify(a));
    expect(JSON.stringify(generateWorkload({ ...SEED_STUDY, seed: 43 }))).not.toBe(JSON.stringify(a));
    expect(WorkloadFileSchema.parse(JSON.parse(JSON.stringify(a)))).toEqual(a);
  });

  it('takes pool prompts (b × max batch + i) mod pool before the reuse start batch, then reuses earlier prompts', () => {
    const w = generateWorkload(SEED_STUDY);
    expect(w.format).toBe('kvbench-workload');
    expect(w.schema_version).toBe(1);
    expect(w.batches).toHaveLength(10);
    w.batches.forEach((b, k) => {
      expect(b.index).toBe(k);
      expect(b.context_tokens).toBe(k < 5 ? 32768 : 65536);
      expect([8, 16, 32]).toContain(b.requests.length);
      const inContext = k % 5;
      b.requests.forEach((r, i) => {
        expect(r.context_tokens).toBe(b.context_tokens);
        expect(r.generation_tokens).toBe(128);
        if (inContext < 3) expect(r.prompt_id).toBe(`ctx${b.context_tokens}_p${(inContext * 32 + i) % 16}`);
      });
    });
    const seen = new Set<string>();
    let reusedLate = 0;
    for (const b of w.batches) {
      for (const r of b.requests) {
        expect(r.reused).toBe(seen.has(r.prompt_id));
        if (b.index % 5 >= 3 && r.reused) reusedLate++;
        seen.add(r.prompt_id);
      }
    }
    expect(reusedLate).toBeGreaterThan(0);
    // New prompts in the reuse phase have ids beyond the pool.
    const late = w.batches.filter((b) => b.index % 5 >= 3).flatMap((b) => b.requests);
    expect(late.some((r) => Number(r.prompt_id.split('_p')[1]) >= 16)).toBe(true);
  });

  it('says when the warm-up resends prompts: a pool no larger than a batch (the reference formula, kept)', () => {
    const p = (pool: number, size: number): WorkloadGenerateParams => ({ ...SEED_STUDY, contexts: [100], batches_per_context: 3, batch_sizes: [size], prompt_pool_size: pool, reuse_start_batch: 2 });
    // Batches of 6 from a pool of 4: batch 0 is p0 p1 p2 p3 p0 p1, batch 1 is p2 p3 p0 p1 p2 p3.
    const small = p(4, 6);
    const w = generateWorkload(small);
    expect(w.batches.slice(0, 2).map((b) => b.requests.map((r) => r.prompt_id.split('_')[1]).join(' '))).toEqual(['p0 p1 p2 p3 p0 p1', 'p2 p3 p0 p1 p2 p3']);
    expect(warmupRepeats(w, small)).toEqual({ warmupRequests: 12, repeated: 8, inBatchDuplicates: 8, distinctPoolSize: 12 });
    expect(warmupNote(small, warmupRepeats(w, small))).toMatch(
      /warm-up batches \(the first 2 per context\) take pool prompt \(b × 6 \+ i\) mod 4, .*8 of 12 warm-up request\(s\) resend a prompt .*, and 8 share their prompt with another request of the same batch .*--prompt-pool-size 12 or more/,
    );
    // A pool the size of one batch: no duplicates within a batch, but batch 1 resends batch 0.
    expect(warmupRepeats(generateWorkload(p(6, 6)), p(6, 6))).toMatchObject({ repeated: 6, inBatchDuplicates: 0 });
    // Large enough: distinct prompts, no note.
    expect(warmupNote(p(12, 6), warmupRepeats(generateWorkload(p(12, 6)), p(12, 6)))).toBeNull();
    // The study's own parameters (pool 16, batches up to 32) resend prompts in every context.
    const study = warmupRepeats(generateWorkload(SEED_STUDY), SEED_STUDY);
    expect(study.repeated).toBeGreaterThan(0);
    expect(study.distinctPoolSize).toBe(96);
  });

  it('parses its command line like the reference generator', () => {
    const p = parseWorkloadGenerateArgs(
      ['--contexts', '32768', '65536', '--batches-per-context', '5', '--batch-sizes', '8', '16', '32', '--prompt-pool-size', '16', '--reuse-start-batch', '3', '--delay-ms', '0', '--seed', '42', '--out', 'w.json'],
      '/tmp',
    );
    expect(p).toEqual({ ok: true, params: SEED_STUDY, out: '/tmp/w.json' });
    const bad = parseWorkloadGenerateArgs(['--contexts', 'x', '--batch-sizes', '0', '--bogus']);
    expect(bad.ok).toBe(false);
    const errors = (bad as { errors: string[] }).errors.join('\n');
    expect(errors).toContain("argument --contexts: invalid int value: 'x'");
    expect(errors).toContain('--out');
    expect(errors).toContain('--batch-sizes must be positive');
    expect(errors).toContain('unrecognized argument: --bogus');
    expect(parseWorkloadGenerateArgs(['--help'])).toEqual({ ok: 'help' });
  });
});

describe('workload file replay', () => {
  function write(params: Partial<WorkloadGenerateParams>): string {
    const file = path.join(tempDir(), 'workload.json');
    fs.writeFileSync(file, JSON.stringify(generateWorkload({ ...SEED_STUDY, contexts: [2048, 4096], ...params }), null, 2));
    return file;
  }

  it('replays batches in order: a batch arrives together, batches one delay apart', async () => {
    const file = write({ delay_ms: 250 });
    const w = await readWorkloadFile(file);
    const src = await createWorkloadSource(makeCtx({ datasetPath: file, traceSpeedup: 1, replayCycles: 1 }));
    expect(src.kind).toBe('workload-file');
    expect(src.paced).toBe(true);
    const reqs = await takeAll(src);
    const flat = w.batches.flatMap((b) => b.requests.map((r) => ({ b, r })));
    expect(reqs).toHaveLength(flat.length);
    reqs.forEach((req, i) => {
      const { b, r } = flat[i];
      expect(req.arrivalNs).toBe((b.index + 1) * 250e6);
      expect(req.id).toBe(r.id);
      expect(req.contextTokens).toBe(r.context_tokens);
      expect(req.generationTokens).toBe(r.generation_tokens);
      expect(req.userId).toBe(`wl_user_${b.requests.indexOf(r)}`);
      expect(req.systemPrompt).toBeNull();
      const blocks = req.prefixBlocks!;
      expect(blocks).toHaveLength(Math.ceil(r.context_tokens / 512));
      expect(blocks.reduce((n, x) => n + x.tokens, 0)).toBe(r.context_tokens);
      expect(blocks[0].key).toBe(`wl_${r.prompt_id}_b0`);
    });
    // A reused prompt uses the very block keys of its first request, so it hits what that one wrote.
    const firstBlocks = new Map<string, string[]>();
    for (let i = 0; i < reqs.length; i++) {
      const keys = reqs[i].prefixBlocks!.map((x) => x.key);
      const pid = flat[i].r.prompt_id;
      if (flat[i].r.reused) expect(keys).toEqual(firstBlocks.get(pid));
      else firstBlocks.set(pid, keys);
    }
    const speedy = await createWorkloadSource(makeCtx({ datasetPath: file, traceSpeedup: 5, replayCycles: 1 }));
    expect((await takeAll(speedy))[reqs.length - 1].arrivalNs).toBe((w.batches.length * 250e6) / 5);
  });

  it('is unpaced when the file has no delays, and later cycles use their own keys', async () => {
    const file = write({ delay_ms: 0 });
    const src = await createWorkloadSource(makeCtx({ datasetPath: file, replayCycles: 2 }));
    expect(src.paced).toBe(false);
    const reqs = await takeAll(src);
    const n = reqs.length / 2;
    expect(reqs.every((r) => r.arrivalNs === 0)).toBe(true);
    expect(reqs.slice(n).every((r) => r.prefixBlocks!.every((b) => b.key.startsWith('c1_wl_')))).toBe(true);
    expect(src.describe()).toMatchObject({ format: 'kvbench-workload-json', cycles_completed: 2 });
  });

  it('generate → replay is deterministic (same file, same seed → same digest)', async () => {
    const digest = async () => {
      const file = write({ seed: 9 });
      const src = await createWorkloadSource(makeCtx({ datasetPath: file, replayCycles: 1 }, { seed: 3 }));
      await takeAll(src);
      return src.digest();
    };
    expect(await digest()).toBe(await digest());
  });
});

describe('workload sizes the engine cannot serve are refused where they are read', () => {
  function fileWith(over: { kv_block_tokens?: number; context_tokens?: number; generation_tokens?: number; delay_ms?: number }): string {
    const ctx = over.context_tokens ?? 1024;
    const file = path.join(tempDir(), 'hostile.json');
    const w = {
      format: 'kvbench-workload',
      schema_version: 1,
      ...(over.kv_block_tokens !== undefined ? { kv_block_tokens: over.kv_block_tokens } : {}),
      batches: [
        { index: 0, context_tokens: ctx, delay_ms: 0, requests: [{ id: 'a', prompt_id: 'p', context_tokens: ctx, generation_tokens: 1, reused: false }] },
        {
          index: 1, context_tokens: ctx, delay_ms: over.delay_ms ?? 0,
          requests: [{ id: 'b', prompt_id: 'q', context_tokens: ctx, generation_tokens: over.generation_tokens ?? 1, reused: false }],
        },
      ],
    };
    fs.writeFileSync(file, JSON.stringify(w));
    return file;
  }

  it('a request of more than 65,536 KV blocks (kv_block_tokens 1, 10 M tokens: the engine ran out of heap)', async () => {
    const file = fileWith({ kv_block_tokens: 1, context_tokens: 10_000_000 });
    await expect(readWorkloadFile(file)).rejects.toThrow(
      /batches\[0\]\.requests\[0\]\.context_tokens: 10000000 tokens in blocks of kv_block_tokens 1 make 10,000,000 KV blocks; a request holds at most 65,536 \(kv_block_tokens 153 or more\)/,
    );
    // The largest context at the default block size, and 65,536 blocks exactly, are fine.
    await expect(readWorkloadFile(fileWith({ context_tokens: 10_000_000 }))).resolves.toBeDefined();
    await expect(readWorkloadFile(fileWith({ kv_block_tokens: 16, context_tokens: 16 * 65_536 }))).resolves.toBeDefined();
  });

  it('generation_tokens beyond any context window, and a delay over a day (setTimeout fired those at once)', async () => {
    await expect(readWorkloadFile(fileWith({ generation_tokens: 1e15 }))).rejects.toThrow(
      /batches\[1\]\.requests\[0\]\.generation_tokens: generation_tokens must be at most 10,000,000/,
    );
    await expect(readWorkloadFile(fileWith({ delay_ms: 2 ** 31 }))).rejects.toThrow(/batches\[1\]\.delay_ms: delay_ms must be at most 86,400,000 \(a day\)/);
    await expect(readWorkloadFile(fileWith({ kv_block_tokens: 2e7 }))).rejects.toThrow(/kv_block_tokens: kv_block_tokens must be at most 10,000,000/);
  });

  it('workload generate: more than 1,000,000 requests, a delay over a day or generation beyond a context window (the heap filled)', () => {
    const errorsOf = (args: string[]) => {
      const r = parseWorkloadGenerateArgs(['--out', 'w.json', ...args], '/tmp');
      return r.ok === false ? r.errors.join('\n') : '';
    };
    expect(errorsOf(['--contexts', '1024', '--batches-per-context', '10000000', '--batch-sizes', '32'])).toContain(
      '--contexts (1 size) × --batches-per-context 10000000 × the largest of --batch-sizes 32 is up to 320,000,000 requests; a workload file holds at most 1,000,000',
    );
    expect(errorsOf(['--contexts', '1024', '--delay-ms', '99999999999999999999'])).toContain('--delay-ms must be at most 86,400,000 (a day)');
    expect(errorsOf(['--contexts', '1024', '--generation-tokens', '10000001'])).toContain('--generation-tokens must be at most 10,000,000');
    expect(errorsOf(['--contexts', '1024', '2048', '--batches-per-context', '15625', '--batch-sizes', '32'])).toBe('');
  });
});
