import { afterEach, describe, expect, it } from 'vitest';
import { createWorkloadSource } from '../../../src-main/engine/workload/sources/create-source.ts';
import { loadShareGpt, SHAREGPT_MAX_CONTEXT_TOKENS, SHAREGPT_MAX_GENERATION_TOKENS } from '../../../src-main/engine/workload/sources/sharegpt-source.ts';
import { estimateCounter } from '../../../src-main/engine/workload/sources/token-counter.ts';
import { conversation, makeCtx, removeTempDirs, takeAll, tempDir, writeFile, writeShareGpt } from './helpers.ts';

afterEach(removeTempDirs);

describe('ShareGPT dataset loading', () => {
  it('turns (human, gpt) pairs into turns with chars/4 token counts and the reference caps', async () => {
    const dir = tempDir();
    const file = writeFile(
      dir,
      'sg.json',
      JSON.stringify([
        conversation('a', [
          [400, 80],
          [9, 3],
        ]),
        conversation('long', [[100_000, 10_000]]),
        { id: 'no-pairs', conversations: [{ from: 'gpt', value: 'hello there' }, { from: 'system', value: 'x' }] },
        conversation('roles', [[40, 8]], [{ from: 'system', value: 'You are...' }]),
      ]),
    );
    const ds = await loadShareGpt(file, { maxConversations: 500, counter: estimateCounter() });
    expect(ds.conversations.map((c) => c.id)).toEqual(['a', 'long', 'roles']);
    expect(ds.conversations[0].contextTokens).toEqual([100, 2]);
    expect(ds.conversations[0].generationTokens).toEqual([20, 1]); // 3 chars → max(1, 0)
    expect(ds.conversations[1].contextTokens).toEqual([SHAREGPT_MAX_CONTEXT_TOKENS]);
    expect(ds.conversations[1].generationTokens).toEqual([SHAREGPT_MAX_GENERATION_TOKENS]);
    expect(ds.cappedContextTurns).toBe(1);
    expect(ds.cappedGenerationTurns).toBe(1);
    expect(ds.withoutTurns).toBe(1);
    expect(ds.otherRoleMessages).toBe(2);
    expect(ds.unpairedMessages).toBe(1); // no-pairs' lone reply
    expect(ds.turns).toBe(4);
    expect(ds.fileReadFully).toBe(true);
  });

  it('counts human and gpt messages that form no (human, gpt) pair instead of dropping them silently', async () => {
    const msg = (from: string, value: string) => ({ from, value });
    const file = writeFile(
      tempDir(),
      'unpaired.json',
      JSON.stringify([
        { id: 'x', conversations: [msg('gpt', 'greeting first'), msg('human', 'q1'), msg('human', 'q2'), msg('gpt', 'a2'), msg('human', 'left unanswered')] },
      ]),
    );
    const ds = await loadShareGpt(file, { maxConversations: 500, counter: estimateCounter() });
    expect(ds.turns).toBe(1);
    expect(ds.unpairedMessages).toBe(3); // the leading reply, the question answered by nobody, the trailing one
  });

  it('counts special-token strings (<|endoftext|> …) in the text as plain text with the shipped tokenizer', async () => {
    const specials = ['<|endoftext|>', '<|fim_prefix|>', '<|fim_middle|>', '<|fim_suffix|>', '<|endofprompt|>'];
    const file = writeFile(
      tempDir(),
      'special.json',
      JSON.stringify(specials.map((sp, i) => ({ id: `s${i}`, conversations: [{ from: 'human', value: `a ${sp} b` }, { from: 'gpt', value: `ok ${sp}` }] }))),
    );
    const ds = await loadShareGpt(file, { maxConversations: 500 });
    expect(ds.tokenizer).toBe('gpt-tokenizer cl100k_base');
    expect(ds.turns).toBe(specials.length);
    // As tiktoken's encode(disallowed_special=()): "a", " <|", "endo", "ft", "ext", "|", ">", " b" — the
    // string spelled out, where one control token would make "a <|endoftext|> b" 4.
    expect(ds.conversations[0].contextTokens).toEqual([8]);
    for (const c of ds.conversations) expect(c.contextTokens[0]).toBeGreaterThan(3);
  });

  it('a tokenizer that fails on a message is a VALIDATION error naming the file, conversation and message', async () => {
    const file = writeFile(tempDir(), 'fails.json', `[\n${JSON.stringify(conversation('ok', [[8, 8]]))},\n${JSON.stringify({ id: 'bad', conversations: [{ from: 'human', value: 'fine' }, { from: 'gpt', value: 'BOOM' }] })}\n]`);
    const counter = {
      name: 'picky-bpe',
      count: (t: string) => {
        if (t.includes('BOOM')) throw new Error('cannot count BOOM');
        return 1;
      },
    };
    await expect(loadShareGpt(file, { maxConversations: 500, counter })).rejects.toMatchObject({
      code: 'VALIDATION',
      message: `${file}, line 3: conversation 2, message 2: picky-bpe could not count its text: cannot count BOOM`,
    });
  });

  it('stops reading at --max-conversations usable conversations', async () => {
    const file = writeShareGpt(tempDir(), 50);
    const ds = await loadShareGpt(file, { maxConversations: 7, counter: estimateCounter() });
    expect(ds.conversations).toHaveLength(7);
    expect(ds.fileReadFully).toBe(false);
  });

  it('reads minified and pretty-printed files alike, and keeps repeated ids apart', async () => {
    const dir = tempDir();
    const a = await loadShareGpt(writeShareGpt(dir, 12, 'a.json', false), { maxConversations: 100, counter: estimateCounter() });
    const b = await loadShareGpt(writeShareGpt(dir, 12, 'b.json', true), { maxConversations: 100, counter: estimateCounter() });
    expect(b.conversations).toEqual(a.conversations);
    const dup = writeFile(dir, 'dup.json', JSON.stringify([conversation('x', [[10, 10]]), conversation('x', [[10, 10]])]));
    const d = await loadShareGpt(dup, { maxConversations: 100, counter: estimateCounter() });
    expect(new Set(d.conversations.map((c) => c.id)).size).toBe(2);
    // A renamed id that another conversation already uses is renamed on.
    const taken = writeFile(dir, 'taken.json', JSON.stringify([conversation('a~2', [[10, 10]]), conversation('a', [[10, 10]]), conversation('a', [[10, 10]])]));
    const t = await loadShareGpt(taken, { maxConversations: 100, counter: estimateCounter() });
    expect(t.conversations.map((c) => c.id)).toEqual(['a~2', 'a', 'a~3']);
  });
});

describe('ShareGPT replay', () => {
  it('replays conversations turn by turn with real multi-turn reload keys', async () => {
    const file = writeShareGpt(tempDir(), 10);
    const ctx = makeCtx({ datasetPath: file, numUsers: 3, replayCycles: 1 });
    const src = await createWorkloadSource(ctx);
    expect(src.kind).toBe('sharegpt');
    // 10 conversations with 1..4 turns: 1+2+3+4+1+2+3+4+1+2 = 23 turns.
    const pass = await takeAll(src);
    expect(pass).toHaveLength(23);
    const written = new Set<string>();
    for (const r of pass) {
      expect(r.conversationId).not.toBeNull();
      expect(r.cacheKey).toBe(`${r.conversationId}_turn_${r.turn}`);
      expect(r.previousTurnKeys).toEqual(Array.from({ length: r.turn - 1 }, (_, k) => `${r.conversationId}_turn_${k + 1}`));
      // Every reloaded turn was offered (and so written) before.
      for (const k of r.previousTurnKeys) expect(written.has(k)).toBe(true);
      written.add(r.cacheKey);
      expect(r.userId).toMatch(/^dataset_user_[0-2]$/);
      expect(r.phase).toBe(r.contextTokens >= 10_000 ? 'prefill' : 'prefill_decode');
    }
    // A conversation stays with one user.
    const userOf = new Map<string, string>();
    for (const r of pass) {
      if (userOf.has(r.conversationId!)) expect(userOf.get(r.conversationId!)).toBe(r.userId);
      userOf.set(r.conversationId!, r.userId);
    }
    expect(src.activeUsers).toBe(3);
    expect(src.paced).toBe(false);
    const d = src.describe();
    expect(d.conversations_loaded).toBe(10);
    expect(d.turns).toBe(23);
    expect(d.tokenizer).toBe('gpt-tokenizer cl100k_base'); // the shipped tokenizer, not the estimate
  });

  it('counts conversations started among the requests offered, not the ones read ahead', async () => {
    const file = writeShareGpt(tempDir(), 10);
    // Conversations 0..9 have 1..4 turns (i % 4 + 1); with 1 user they are replayed one after the other.
    const src = await createWorkloadSource(makeCtx({ datasetPath: file, numUsers: 1, replayCycles: 0 }));
    expect(src.describe().conversations_started, 'nothing offered yet, however much was read').toBe(0);
    const first = await takeAll(src, 5);
    const starts = first.filter((r) => r.turn === 1).length;
    expect(starts).toBeGreaterThan(1);
    expect(src.describe().conversations_started).toBe(starts);
    // The same with --disable-multi-turn, where every request has turn 1 but only first turns start one.
    const flat = await createWorkloadSource(makeCtx({ datasetPath: file, numUsers: 1, replayCycles: 1, disableMultiTurn: true }));
    await takeAll(flat, 3);
    expect(flat.describe().conversations_started).toBeLessThan(3);
    await takeAll(flat);
    expect(flat.describe().conversations_started).toBe(10);
  });

  it('users take turns, so a conversation\'s next turn comes a round after the previous one', async () => {
    const dir = tempDir();
    const file = writeFile(
      dir,
      'sg.json',
      JSON.stringify(Array.from({ length: 4 }, (_, i) => conversation(`c${i}`, [[40, 8], [40, 8], [40, 8]]))),
    );
    const src = await createWorkloadSource(makeCtx({ datasetPath: file, numUsers: 4, replayCycles: 1 }));
    const reqs = await takeAll(src);
    expect(reqs.map((r) => `${r.userId}:${r.turn}`).slice(0, 8)).toEqual([
      'dataset_user_0:1',
      'dataset_user_1:1',
      'dataset_user_2:1',
      'dataset_user_3:1',
      'dataset_user_0:2',
      'dataset_user_1:2',
      'dataset_user_2:2',
      'dataset_user_3:2',
    ]);
  });

  it('--disable-multi-turn gives every request its own key and no reload', async () => {
    const file = writeShareGpt(tempDir(), 10);
    const src = await createWorkloadSource(makeCtx({ datasetPath: file, disableMultiTurn: true, replayCycles: 1 }));
    const reqs = await takeAll(src);
    expect(reqs).toHaveLength(23);
    expect(new Set(reqs.map((r) => r.cacheKey)).size).toBe(23);
    for (const r of reqs) {
      expect(r.previousTurnKeys).toEqual([]);
      expect(r.conversationId).toBeNull();
      expect(r.turn).toBe(1);
      expect(r.cacheKey).toMatch(/^dataset_user_\d+_req_\d{6}$/);
    }
  });

  it('paces one request every 1/rate seconds with --request-rate, and is unpaced without', async () => {
    const file = writeShareGpt(tempDir(), 10);
    const paced = await createWorkloadSource(makeCtx({ datasetPath: file, requestRate: 4, replayCycles: 1 }));
    expect(paced.paced).toBe(true);
    const reqs = await takeAll(paced);
    expect(reqs.map((r) => r.arrivalNs)).toEqual(reqs.map((_, k) => k * 250_000_000));
    const unpaced = await createWorkloadSource(makeCtx({ datasetPath: file, requestRate: 0, replayCycles: 1 }));
    expect(unpaced.paced).toBe(false);
    expect((await takeAll(unpaced)).every((r) => r.arrivalNs === 0)).toBe(true);
  });

  it('replays --replay-cycles passes under distinct keys, and loops with 0', async () => {
    const file = writeShareGpt(tempDir(), 10);
    const src = await createWorkloadSource(makeCtx({ datasetPath: file, replayCycles: 3 }));
    const reqs = await takeAll(src);
    expect(reqs).toHaveLength(69);
    const c0 = reqs.slice(0, 23);
    const c1 = reqs.slice(23, 46);
    expect(c1.every((r) => r.cacheKey.startsWith('c1_') && r.previousTurnKeys.every((k) => k.startsWith('c1_')))).toBe(true);
    expect(reqs.slice(46).every((r) => r.cacheKey.startsWith('c2_'))).toBe(true);
    const keys0 = new Set(c0.map((r) => r.cacheKey));
    expect(c1.some((r) => keys0.has(r.cacheKey))).toBe(false);
    expect(c1.map((r) => r.cacheKey.slice(3))).toEqual(c0.map((r) => r.cacheKey));
    expect(src.peekArrivalNs()).toBe(Number.POSITIVE_INFINITY);
    expect(src.describe().cycles_completed).toBe(3);

    const loop = await createWorkloadSource(makeCtx({ datasetPath: file, replayCycles: 0 }));
    const many = await takeAll(loop, 500);
    expect(many).toHaveLength(500);
    expect(loop.describe().cycles_completed).toBe(Math.floor(500 / 23));
  });

  it('is deterministic: same seed → same digest; another seed shuffles and draws differently', async () => {
    const file = writeShareGpt(tempDir(), 40);
    const run = async (seed: number) => {
      const src = await createWorkloadSource(makeCtx({ datasetPath: file, replayCycles: 2 }, { seed }));
      const reqs = await takeAll(src);
      return { digest: src.digest(), reqs };
    };
    const a = await run(1);
    const b = await run(1);
    const c = await run(2);
    expect(a.digest).toMatch(/^[0-9a-f]{64}$/);
    expect(b.digest).toBe(a.digest);
    expect(b.reqs).toEqual(a.reqs);
    expect(c.digest).not.toBe(a.digest);
  });

  it('draws QoS per request in the configured shares (15/35/50 %)', async () => {
    const file = writeShareGpt(tempDir(), 40);
    const src = await createWorkloadSource(makeCtx({ datasetPath: file }));
    const reqs = await takeAll(src, 20_000);
    const share = (q: string) => reqs.filter((r) => r.qos === q).length / reqs.length;
    expect(share('interactive')).toBeCloseTo(0.15, 1);
    expect(share('responsive')).toBeCloseTo(0.35, 1);
    expect(share('batch')).toBeCloseTo(0.5, 1);
    for (const r of reqs.slice(0, 50)) expect(r.priority).toBe({ interactive: 3, responsive: 2, batch: 1 }[r.qos]);
  });

  it('honours decode-only and prefill-only modes', async () => {
    const file = writeShareGpt(tempDir(), 10);
    const prepop = ['prepop_0', 'prepop_1'];
    const dec = await takeAll(await createWorkloadSource(makeCtx({ datasetPath: file, decodeOnly: true, replayCycles: 1 }, { prepopulatedKeys: prepop })));
    expect(dec.every((r) => r.phase === 'decode' && prepop.includes(r.decodeKey) && r.previousTurnKeys.length === 0)).toBe(true);
    const pre = await takeAll(await createWorkloadSource(makeCtx({ datasetPath: file, prefillOnly: true, replayCycles: 1 })));
    expect(pre.every((r) => r.phase === 'prefill')).toBe(true);
  });
});
