import { describe, expect, it } from 'vitest';
import { SyntheticWorkload, type KvRequest } from '../../../src-main/engine/workload/synthetic-workload.ts';
import { PERSONAS, PREFILL_ONLY_CONTEXT_TOKENS } from '../../../src-main/engine/workload/personas.ts';
import { RequestQueue } from '../../../src-main/engine/workload/request-queue.ts';
import { DEFAULT_WORKLOAD_PROFILE } from '../../../src-main/engine/workload/workload-profile.ts';

function workload(seed: number, numUsers: number, extra: Partial<ConstructorParameters<typeof SyntheticWorkload>[0]> = {}) {
  return new SyntheticWorkload({
    seed,
    numUsers,
    multiTurn: true,
    prefixCaching: true,
    mode: 'standard',
    ragDocuments: null,
    prepopulatedKeys: [],
    ...extra,
  });
}

function take(w: SyntheticWorkload, n: number): KvRequest[] {
  return Array.from({ length: n }, () => w.next());
}

describe('SyntheticWorkload', () => {
  it('offers the same request stream for the same seed and configuration, and a different one for another seed', () => {
    const a = workload(42, 20);
    const b = workload(42, 20);
    const c = workload(43, 20);
    const ra = take(a, 500);
    const rb = take(b, 500);
    take(c, 500);
    expect(ra).toEqual(rb);
    expect(a.digest()).toBe(b.digest());
    expect(a.digest()).not.toBe(c.digest());
  });

  it('issues requests in arrival order (open loop: arrivals never depend on completions)', () => {
    const reqs = take(workload(7, 50), 2000);
    for (let i = 1; i < reqs.length; i++) expect(reqs[i].arrivalNs).toBeGreaterThanOrEqual(reqs[i - 1].arrivalNs);
    expect(reqs.map((r) => r.seq)).toEqual(reqs.map((_, i) => i));
  });

  it("keeps each user's stream independent of how many other users exist", () => {
    const few = take(workload(9, 3), 300).filter((r) => r.userIndex === 1);
    const many = take(workload(9, 30), 3000).filter((r) => r.userIndex === 1);
    const n = Math.min(few.length, many.length, 20);
    const strip = (r: KvRequest) => ({ ...r, seq: 0, id: '', cacheKey: r.conversationId ? r.cacheKey : '' , decodeKey: '' });
    expect(few.slice(0, n).map(strip)).toEqual(many.slice(0, n).map(strip));
  });

  it('draws context and generation lengths within the persona ranges, and applies the 10,000-token prefill-only rule', () => {
    const reqs = take(workload(11, 200, { prefixCaching: false }), 5000);
    const maxCtx = Math.max(...PERSONAS.map((p) => p.contextTokens[1]));
    for (const r of reqs) {
      expect(r.contextTokens).toBeGreaterThanOrEqual(1);
      expect(r.contextTokens).toBeLessThanOrEqual(maxCtx);
      expect(r.phase).toBe(r.contextTokens >= PREFILL_ONLY_CONTEXT_TOKENS ? 'prefill' : 'prefill_decode');
    }
    expect(reqs.some((r) => r.phase === 'prefill')).toBe(true);
  });

  it('assigns QoS classes to about 15 / 35 / 50 % of users', () => {
    const w = workload(5, 10_000);
    const users = w.users();
    const share = (q: string) => users.filter((u) => u.qos === q).length / users.length;
    expect(share('interactive')).toBeCloseTo(0.15, 1);
    expect(share('responsive')).toBeCloseTo(0.35, 1);
    expect(share('batch')).toBeCloseTo(0.5, 1);
  });

  it('reloads every earlier turn: turn N reads N−1 entries, N(N−1)/2 over a conversation', () => {
    const reqs = take(workload(3, 5, { prefixCaching: false }), 3000);
    const byConversation = new Map<string, KvRequest[]>();
    for (const r of reqs) {
      const list = byConversation.get(r.conversationId!) ?? [];
      list.push(r);
      byConversation.set(r.conversationId!, list);
    }
    let multiTurnSeen = false;
    for (const turns of byConversation.values()) {
      turns.forEach((r, i) => {
        expect(r.turn).toBe(i + 1);
        expect(r.previousTurnKeys).toEqual(Array.from({ length: i }, (_, t) => `${r.conversationId}_turn_${t + 1}`));
      });
      const n = turns.length;
      if (n > 2) multiTurnSeen = true;
      expect(turns.reduce((sum, r) => sum + r.previousTurnKeys.length, 0)).toBe((n * (n - 1)) / 2);
      expect(n).toBeLessThanOrEqual(50);
    }
    expect(multiTurnSeen).toBe(true);
  });

  it('gives every request a unique key and no reloads when multi-turn is disabled', () => {
    const reqs = take(workload(3, 5, { multiTurn: false }), 500);
    expect(new Set(reqs.map((r) => r.cacheKey)).size).toBe(500);
    expect(reqs.every((r) => r.previousTurnKeys.length === 0 && r.turn === 1 && r.conversationId === null)).toBe(true);
  });

  it('detects a shared system prompt in about 20 % of requests, with the 3 fixed prompts', () => {
    const reqs = take(workload(8, 100), 10_000);
    const withPrompt = reqs.filter((r) => r.systemPrompt);
    expect(withPrompt.length / reqs.length).toBeCloseTo(0.2, 1);
    expect(new Set(withPrompt.map((r) => r.systemPrompt!.key)).size).toBe(3);
    expect(new Set(withPrompt.map((r) => r.systemPrompt!.tokens))).toEqual(new Set([5, 9, 6]));
    expect(withPrompt.every((r) => r.cacheType === 'system')).toBe(true);
  });

  it('points decode-only requests at pre-populated entries and prefill-only requests at no decode', () => {
    const keys = ['prepop_0', 'prepop_1', 'prepop_2'];
    const d = take(workload(1, 10, { mode: 'decode-only', prepopulatedKeys: keys }), 200);
    expect(d.every((r) => r.phase === 'decode' && keys.includes(r.decodeKey) && r.previousTurnKeys.length === 0)).toBe(true);
    const p = take(workload(1, 10, { mode: 'prefill-only' }), 200);
    expect(p.every((r) => r.phase === 'prefill')).toBe(true);
  });
});

describe('RequestQueue', () => {
  const req = (seq: number, priority: number, arrivalNs: number) => ({ seq, priority, arrivalNs, conversationId: null, previousTurnKeys: [] as string[] }) as KvRequest;
  /** Turn `turn` of conversation `conv`: its key, and the keys of the turns before it (reloaded first). */
  const turnReq = (seq: number, priority: number, conv: string, turn: number) =>
    ({
      ...req(seq, priority, seq),
      conversationId: conv,
      turn,
      cacheKey: `${conv}_turn_${turn}`,
      previousTurnKeys: Array.from({ length: turn - 1 }, (_, i) => `${conv}_turn_${i + 1}`),
    }) as KvRequest;

  it('serves higher priority first, then earlier arrival, then lower sequence number', async () => {
    const q = new RequestQueue();
    q.push(req(0, 1, 10));
    q.push(req(1, 3, 30));
    q.push(req(2, 2, 5));
    q.push(req(3, 3, 20));
    q.push(req(4, 3, 20));
    const order: number[] = [];
    for (let i = 0; i < 5; i++) order.push((await q.take())!.seq);
    expect(order).toEqual([3, 4, 1, 2, 0]);
  });

  it('wakes a waiting worker on push and returns null to waiters once closed', async () => {
    const q = new RequestQueue();
    const waiting = q.take();
    q.push(req(9, 1, 0));
    expect((await waiting)!.seq).toBe(9);
    const w2 = q.take();
    q.push(req(10, 1, 0));
    q.close();
    expect((await w2)!.seq).toBe(10);
    expect(await q.take()).toBeNull();
  });

  it("holds a conversation's turn until the earlier turn has written its entry, whatever their priorities", async () => {
    const q = new RequestQueue();
    const t1 = turnReq(0, 1, 'conv_a', 1);
    const t2 = turnReq(1, 3, 'conv_a', 2);
    const t3 = turnReq(2, 3, 'conv_a', 3);
    q.push(t1);
    q.push(t2);
    q.push(t3);
    q.push(req(3, 2, 3));
    expect(q.depth).toBe(4);
    // Turn 2 outranks everything but reloads turn 1, which has not been served yet: the others go first.
    expect((await q.take())!.seq).toBe(3);
    expect((await q.take())!.seq).toBe(0);
    expect(q.depth).toBe(2);
    const next = q.take();
    let served: KvRequest | null = null;
    void next.then((r) => (served = r));
    await Promise.resolve();
    expect(served).toBeNull(); // turn 1 is being served, its entry not written yet
    q.release(t1);
    expect((await next)!.seq).toBe(1);
    q.release(t1); // idempotent: turn 3 still waits for turn 2
    expect(q.depth).toBe(1);
    q.release(t2);
    expect((await q.take())!.seq).toBe(2);
    expect(q.depth).toBe(0);
    expect(q.maxDepth).toBe(4);
  });

  it('never holds requests without earlier turns, and drops held ones on close', async () => {
    const q = new RequestQueue();
    q.push(turnReq(0, 1, 'conv_b', 1));
    q.push(turnReq(1, 1, 'conv_b', 2));
    q.push(turnReq(2, 1, 'conv_c', 1));
    expect((await q.take())!.seq).toBe(0);
    expect((await q.take())!.seq).toBe(2);
    expect(q.close().map((r) => r.seq)).toEqual([1]);
    expect(q.depth).toBe(0);
  });
});


describe('SyntheticWorkload above the tracked-conversation cap', () => {
  it('warns once, on the log and in its description, when the users outnumber the conversations it tracks (initially or by the autoscaler)', () => {
    const logged: string[] = [];
    const log = (_level: 'warn', message: string): void => void logged.push(message);
    // The reference's cap (1000): 1000 users fit, 1001 do not.
    expect(workload(1, 1000, { log }).describe().warnings).toEqual([]);
    expect(logged).toEqual([]);
    const over = workload(1, 1001, { log });
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatch(/^1001 users are more than the 1000 conversations tracked at once .*multi-turn requests .* will be rarer/);
    expect(over.describe().warnings).toEqual(logged);
    // Without multi-turn nothing is tracked, so nothing fades.
    workload(1, 1001, { log, multiTurn: false });
    expect(logged).toHaveLength(1);
    // The autoscaler adding users past the cap: said then, once.
    const grown = workload(1, 1000, { log });
    grown.addUsers(1, 0);
    grown.addUsers(5, 0);
    expect(logged).toHaveLength(2);
    expect(logged[1]).toMatch(/^1001 users are more than the 1000/);
    expect(grown.describe().warnings).toEqual([logged[1]]);
  });

  it('reports the share of offered requests that continue a conversation, and the conversations the cap cut short', () => {
    const profile = { ...DEFAULT_WORKLOAD_PROFILE, maxTrackedConversations: 10 };
    const describeAfter = (numUsers: number) => {
      const w = workload(7, numUsers, { profile });
      const reqs = take(w, 6000);
      const offered = w.describe().offered as { requests: number; multi_turn_requests: number; multi_turn_share: number; conversations_cut_by_cap: number };
      expect(offered.requests).toBe(6000);
      expect(offered.multi_turn_requests).toBe(reqs.filter((r) => r.turn > 1).length);
      expect(offered.multi_turn_share).toBeCloseTo(offered.multi_turn_requests / 6000, 12);
      return offered;
    };
    const within = describeAfter(10);
    // Each request continues its user's conversation with probability 0.8 (minus the first turns).
    expect(within.multi_turn_share).toBeGreaterThan(0.75);
    expect(within.conversations_cut_by_cap).toBe(0);
    const above = describeAfter(40);
    expect(above.multi_turn_share).toBeLessThan(0.4);
    expect(above.conversations_cut_by_cap).toBeGreaterThan(0);
    const none = workload(7, 10, { profile, multiTurn: false });
    take(none, 100);
    expect(none.describe().offered).toMatchObject({ requests: 100, multi_turn_requests: 0, multi_turn_share: 0, conversations_cut_by_cap: 0 });
  });
});
