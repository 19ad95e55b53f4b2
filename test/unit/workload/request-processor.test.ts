import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MultiTierCache } from '../../../src-main/engine/cache/multi-tier-cache.ts';
import { BytePool } from '../../../src-main/engine/io/byte-workers.ts';
import { PayloadPool } from '../../../src-main/engine/io/payload.ts';
import { RunRecorder } from '../../../src-main/engine/metrics/run-recorder.ts';
import { RequestAbandoned, RequestProcessor } from '../../../src-main/engine/workload/request-processor.ts';
import { RequestQueue, Semaphore } from '../../../src-main/engine/workload/request-queue.ts';
import { EventLoopSlice } from '../../../src-main/engine/workload/event-loop-slice.ts';
import { WorkerPool } from '../../../src-main/engine/workload/worker-pool.ts';
import type { KvRequest } from '../../../src-main/engine/workload/synthetic-workload.ts';
import { MemoryTier, TerminalMemoryTier } from '../../support/memory-tier.ts';

let bytes: BytePool;
beforeAll(async () => {
  bytes = await BytePool.start({ threads: 0, pool: PayloadPool.create(1, 1024 * 1024) });
});
afterAll(async () => {
  await bytes.close();
});

function setup(opts: { verify?: boolean; maxConcurrentAllocs?: number; stop?: AbortSignal; eventLoopSlice?: EventLoopSlice } = {}) {
  const cpu = new MemoryTier('cpu', 4096);
  const storage = new TerminalMemoryTier('storage', 4096);
  const cache = new MultiTierCache([
    { backend: cpu, budgetBytes: 1 << 20 },
    { backend: storage, budgetBytes: 1 << 24 },
  ]);
  const recorder = new RunRecorder({ interactive: 50, responsive: 100, batch: 1000 });
  const processor = new RequestProcessor({
    cache,
    bytes,
    recorder,
    seed: 1,
    entrySizeBytes: (tokens) => tokens * 16,
    modelBytesPerToken: 16,
    allocations: new Semaphore(opts.maxConcurrentAllocs ?? 0),
    generationSecondsPerToken: 0,
    decodeBatchTokens: 32,
    verify: opts.verify ?? false,
    stopSignal: opts.stop ?? new AbortController().signal,
    eventLoopSlice: opts.eventLoopSlice,
  });
  return { cache, cpu, storage, recorder, processor };
}

function request(over: Partial<KvRequest>): KvRequest {
  return {
    seq: 0,
    id: 'r0',
    userIndex: 0,
    userId: 'user_0000',
    qos: 'batch',
    priority: 1,
    arrivalNs: 0,
    submitNs: process.hrtime.bigint(),
    contextTokens: 100,
    generationTokens: 100,
    phase: 'prefill_decode',
    cacheKey: 'conv_a_turn_1',
    conversationId: 'conv_a',
    turn: 1,
    previousTurnKeys: [],
    systemPrompt: null,
    ragChunks: null,
    decodeKey: 'conv_a_turn_1',
    cacheType: 'user',
    ...over,
  };
}

describe('RequestProcessor', () => {
  it('times queue wait, end-to-end and QoS from the scheduled arrival, and keeps how late the scheduler issued the request apart', async () => {
    const { recorder, processor } = setup();
    const nowNs = process.hrtime.bigint();
    // The workload's clock reads 0 ten seconds ago; this request was due at 2 s on it, issued 5 s
    // late (the backlog cap held it back, or the event loop was late), and dequeued 1 s after that.
    const originNs = nowNs - 10_000_000_000n;
    processor.arrivalsFrom(originNs);
    const submitNs = originNs + 7_000_000_000n;
    await processor.process(request({ arrivalNs: 2e9, submitNs, qos: 'interactive', generationTokens: 1 }), submitNs + 1_000_000_000n);
    expect(recorder.issueLateness.count).toBe(1);
    expect(recorder.issueLateness.sumNs).toBe(5e9);
    expect(recorder.queueWait.sumNs).toBe(6e9);
    expect(recorder.endToEnd.sumNs).toBeGreaterThanOrEqual(8e9);
    // The 50 ms interactive target is missed by the time the user waited, not the time since the issue.
    expect(recorder.qos.get('interactive')!.violations).toBe(1);
    expect(recorder.qos.get('interactive')!.latency.sumNs).toBe(recorder.endToEnd.sumNs);
  });

  it('times an unpaced replay, whose requests have no scheduled arrival, from its issue, with no issue lateness', async () => {
    const { recorder, processor } = setup();
    processor.arrivalsFrom(null);
    const submitNs = process.hrtime.bigint() - 3_000_000_000n;
    await processor.process(request({ arrivalNs: 0, submitNs, generationTokens: 1 }), submitNs + 1_000_000_000n);
    expect(recorder.queueWait.sumNs).toBe(1e9);
    expect(recorder.issueLateness.count).toBe(0);
  });

  it('writes the prefill entry, then reads it 1 + ceil(generated / 32) times on a hit', async () => {
    const { cpu, recorder, processor } = setup();
    await processor.process(request({ generationTokens: 100 }), process.hrtime.bigint());
    expect(cpu.log.filter((l) => l === 'write conv_a_turn_1')).toHaveLength(1);
    expect(cpu.log.filter((l) => l === 'read conv_a_turn_1')).toHaveLength(1 + Math.ceil(100 / 32));
    expect(recorder.requestsCompleted).toBe(1);
    expect(recorder.prefillBytesWritten).toBe(1600);
    expect(recorder.decodeBytesRead).toBe(1600 * 5);
  });

  it('reloads the earlier turns before the prefill of turn 3', async () => {
    const { cpu, recorder, processor } = setup();
    await processor.process(request({ generationTokens: 1 }), 0n);
    await processor.process(request({ turn: 2, cacheKey: 'conv_a_turn_2', decodeKey: 'conv_a_turn_2', previousTurnKeys: ['conv_a_turn_1'], generationTokens: 1 }), 0n);
    cpu.log.length = 0;
    await processor.process(
      request({ turn: 3, cacheKey: 'conv_a_turn_3', decodeKey: 'conv_a_turn_3', previousTurnKeys: ['conv_a_turn_1', 'conv_a_turn_2'], generationTokens: 1 }),
      0n,
    );
    expect(cpu.log.slice(0, 3)).toEqual(['read conv_a_turn_1', 'read conv_a_turn_2', 'write conv_a_turn_3']);
    expect(recorder.multiTurnHits).toBe(3);
  });

  it('writes a shared system prompt on its first miss so that later requests hit it', async () => {
    const { recorder, processor, cache } = setup();
    const systemPrompt = { key: 'kv_system_x', tokens: 5 };
    await processor.process(request({ systemPrompt, cacheType: 'system' }), 0n);
    await processor.process(request({ systemPrompt, cacheType: 'system', cacheKey: 'k2', decodeKey: 'k2' }), 0n);
    expect(recorder.systemPromptEntryMisses).toBe(1);
    expect(recorder.systemPromptEntryHits).toBe(1);
    expect(recorder.systemPromptWrites).toBe(1);
    expect(recorder.systemPromptEntryBytesSaved).toBe(5 * 16);
    expect(cache.hits.typeHits('system')).toBeGreaterThan(1);
  });

  it("counts prefix_hits / prefix_misses as the reference does (a system prompt detected or not, per request), the entry's cache hits apart", async () => {
    const { recorder, processor } = setup();
    const systemPrompt = { key: 'kv_system_x', tokens: 5 };
    // Three requests detect the same prompt (its entry: one miss that writes it, then two hits); two detect none.
    const detected = [true, false, true, false, true];
    for (const [i, d] of detected.entries()) {
      await processor.process(request({ id: `r${i}`, cacheKey: `k${i}`, decodeKey: `k${i}`, systemPrompt: d ? systemPrompt : null, cacheType: d ? 'system' : 'user' }), 0n);
    }
    expect(recorder.requestsCompleted).toBe(5);
    expect(recorder.prefixHits).toBe(3);
    expect(recorder.prefixMisses).toBe(2);
    expect(recorder.prefixHits + recorder.prefixMisses).toBe(recorder.requestsCompleted);
    // The reference's bytes_saved: every detected prompt's KV bytes (5 tokens × 16 bytes/token).
    expect(recorder.prefixBytesSaved).toBe(3 * 5 * 16);
    expect(recorder.systemPromptEntryMisses).toBe(1);
    expect(recorder.systemPromptEntryHits).toBe(2);
    expect(recorder.systemPromptEntryBytesSaved).toBe(2 * 5 * 16);
    expect(recorder.systemPromptWrites).toBe(1);
  });

  it('does only the prefill for prefill-only requests', async () => {
    const { cpu, processor } = setup();
    await processor.process(request({ phase: 'prefill' }), 0n);
    expect(cpu.log).toEqual(['write conv_a_turn_1']);
  });

  it('lists a prefill latency only for requests that wrote one and a decode latency only for those that decoded', async () => {
    const { recorder, processor } = setup();
    await processor.process(request({ phase: 'prefill', cacheKey: 'p', decodeKey: 'p' }), 0n);
    await processor.process(request({ phase: 'prefill_decode', cacheKey: 'pd', decodeKey: 'pd' }), 0n);
    await processor.process(request({ phase: 'decode', cacheKey: 'pd', decodeKey: 'pd' }), 0n);
    expect(recorder.requestsCompleted).toBe(3);
    expect(recorder.rawLatencies.lists().prefillS).toHaveLength(2);
    expect(recorder.rawLatencies.lists().decodeS).toHaveLength(2);
    expect(recorder.rawLatencies.lists().decodeS.every((s) => s > 0)).toBe(true);
    expect(recorder.decode.count).toBe(2);
    expect(recorder.prefill.count).toBe(2);
  });

  it('counts decode reads that hit, not misses; a decode of 0 tokens still reads once after the first', async () => {
    const { cpu, recorder, processor } = setup();
    // The turn-1 entry exists; turn 2 reloads it and a never-written turn, then decodes its own entry.
    await processor.process(request({ phase: 'prefill', generationTokens: 0 }), 0n);
    cpu.log.length = 0;
    await processor.process(
      request({ turn: 2, cacheKey: 'conv_a_turn_2', decodeKey: 'conv_a_turn_2', previousTurnKeys: ['conv_a_turn_1', 'never_written'], generationTokens: 0 }),
      0n,
    );
    expect(cpu.log.filter((l) => l === 'read conv_a_turn_2')).toHaveLength(2);
    expect(recorder.multiTurnHits).toBe(1);
    expect(recorder.multiTurnMisses).toBe(1);
    expect(recorder.decodeReads).toBe(1 + 2);
    // A decode whose entry is missing counts no decode read.
    await processor.process(request({ phase: 'decode', cacheKey: 'absent', decodeKey: 'absent' }), 0n);
    expect(recorder.decodeReads).toBe(3);
  });

  it('counts in decode_bytes_read every read decode_reads counts: multi-turn reloads and RAG chunks too', async () => {
    const { recorder, processor } = setup();
    await processor.allocate('rag_doc_0_chunk_0', 10);
    await processor.process(request({ phase: 'prefill', contextTokens: 100 }), 0n);
    expect(recorder.decodeBytesRead).toBe(0);
    await processor.process(
      request({
        turn: 2,
        cacheKey: 'conv_a_turn_2',
        decodeKey: 'conv_a_turn_2',
        previousTurnKeys: ['conv_a_turn_1'],
        ragChunks: [{ key: 'rag_doc_0_chunk_0', tokens: 10 }],
        contextTokens: 50,
        generationTokens: 1,
      }),
      0n,
    );
    // 1 reload of turn 1 (1600 B), 1 RAG chunk (160 B), and the decode's 1 + 1 reads of turn 2 (800 B each).
    expect(recorder.multiTurnHits).toBe(1);
    expect(recorder.decodeReads).toBe(4);
    expect(recorder.decodeBytesRead).toBe(1600 + 160 + 2 * 800);
  });

  it('counts only real writes: a prefill of an existing key is no write and lists no prefill latency', async () => {
    const { cpu, recorder, processor } = setup();
    await processor.process(request({ phase: 'prefill' }), 0n);
    await processor.process(request({ phase: 'prefill' }), 0n);
    expect(cpu.log.filter((l) => l === 'write conv_a_turn_1')).toHaveLength(1);
    expect(recorder.prefillWrites).toBe(1);
    expect(recorder.rawLatencies.lists().prefillS).toHaveLength(1);
    expect(recorder.requestsCompleted).toBe(2);
  });

  it('concurrent requests for the same new prefix blocks: one writes each block, the others wait for it and hit (with --max-concurrent-allocs)', async () => {
    // The review's Mooncake repro: 6 requests at one timestamp share 2 new blocks, one allocation at a time.
    const { cpu, cache, recorder, processor } = setup({ maxConcurrentAllocs: 1 });
    cpu.delayMs = 5;
    const prefixBlocks = [
      { key: 'mc_block_1', tokens: 10 },
      { key: 'mc_block_2', tokens: 10 },
    ];
    await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        processor.process(request({ id: `r${i}`, phase: 'prefill', cacheKey: `mc_req_${i}`, decodeKey: `mc_req_${i}`, cacheType: 'common', prefixBlocks }), 0n),
      ),
    );
    expect(cpu.log.filter((l) => l.startsWith('write '))).toEqual(['write mc_block_1', 'write mc_block_2']);
    expect(recorder.prefillWrites).toBe(2);
    expect(recorder.prefixBlockMisses).toBe(2);
    expect(recorder.prefixBlockHits).toBe(10);
    expect(recorder.prefillBytesWritten).toBe(2 * 160);
    // Only the requests that wrote list a prefill latency, and none is a no-op's 0.
    expect(recorder.rawLatencies.lists().prefillS.length).toBeGreaterThan(0);
    expect(recorder.rawLatencies.lists().prefillS.length).toBeLessThanOrEqual(2);
    expect(recorder.rawLatencies.lists().prefillS.every((s) => s > 0)).toBe(true);
    expect(cache.hits.typeHits('common')).toBe(10);
    expect(recorder.requestsCompleted).toBe(6);
  });

  it('concurrent requests with the same new system prompt: one writes it, the others hit', async () => {
    const { cpu, recorder, processor } = setup({ maxConcurrentAllocs: 1 });
    cpu.delayMs = 5;
    const systemPrompt = { key: 'kv_system_x', tokens: 5 };
    await Promise.all(
      Array.from({ length: 4 }, (_, i) =>
        processor.process(request({ id: `r${i}`, systemPrompt, cacheType: 'system', phase: 'prefill', cacheKey: `k${i}`, decodeKey: `k${i}` }), 0n),
      ),
    );
    expect(cpu.log.filter((l) => l === 'write kv_system_x')).toHaveLength(1);
    expect(recorder.systemPromptWrites).toBe(1);
    expect(recorder.systemPromptEntryMisses).toBe(1);
    expect(recorder.systemPromptEntryHits).toBe(3);
    expect(recorder.prefixHits).toBe(4);
    expect(recorder.prefillWrites).toBe(4);
  });

  it("serves a conversation's turns in order through the queue: every reload hits, though later turns have higher priorities", async () => {
    // The review's ShareGPT case: QoS is drawn per request in replay, so a later turn can outrank the
    // turn before it, and a second worker can start it while that turn is still reloading.
    const { cpu, recorder, processor } = setup();
    cpu.delayMs = 2;
    const queue = new RequestQueue();
    const pool = new WorkerPool(async (req) => {
      try {
        await processor.process(req, 0n, () => queue.release(req));
      } finally {
        queue.release(req);
      }
    }, queue);
    let seq = 0;
    for (let turn = 1; turn <= 4; turn++) {
      for (const conv of ['conv_a', 'conv_b']) {
        const key = (t: number) => `${conv}_turn_${t}`;
        const previousTurnKeys = Array.from({ length: turn - 1 }, (_, i) => key(i + 1));
        queue.push(request({ seq, id: `r${seq}`, arrivalNs: seq++, priority: turn, conversationId: conv, turn, cacheKey: key(turn), decodeKey: key(turn), previousTurnKeys, generationTokens: 1 }));
      }
    }
    pool.resize(2);
    for (let waitedMs = 0; recorder.requestsCompleted < 8 && waitedMs < 5000; waitedMs += 5) await new Promise((r) => setTimeout(r, 5));
    queue.close();
    await pool.drain();
    expect(recorder.requestsCompleted).toBe(8);
    expect(recorder.multiTurnMisses).toBe(0);
    expect(recorder.multiTurnHits).toBe(2 * (1 + 2 + 3));
  });

  it('says when its own entry is written, before its decode', async () => {
    const { cpu, processor } = setup();
    let logAtWritten: string[] | null = null;
    await processor.process(request({ generationTokens: 1 }), 0n, () => (logAtWritten = [...cpu.log]));
    expect(logAtWritten).toEqual(['write conv_a_turn_1']);
    expect(cpu.log).toEqual(['write conv_a_turn_1', 'read conv_a_turn_1', 'read conv_a_turn_1']);
  });

  it('verifies read bytes against the payload and reports none corrupt when nothing is', async () => {
    const { cpu, processor } = setup({ verify: true });
    await processor.process(request({ generationTokens: 40 }), 0n);
    expect(processor.verifyErrorCount).toBe(0);
    // What was checked, so that "0 corrupt" is not said of nothing: every chunk of every read.
    const reads = cpu.log.filter((l) => l.startsWith('read ')).length;
    expect(reads).toBeGreaterThan(0);
    expect(processor.verifiedChunks.cpu?.chunks).toBeGreaterThanOrEqual(reads);
    expect(processor.verifiedChunks.cpu?.bytes).toBeGreaterThan(0);
  });

  it('reports a corrupt chunk with its key and offset', async () => {
    const { cpu, processor } = setup({ verify: true });
    await processor.process(request({ phase: 'prefill' }), 0n);
    cpu.entries.get('conv_a_turn_1')![0][100] ^= 0xff;
    await processor.read('conv_a_turn_1', 'user');
    expect(processor.verifyErrorCount).toBe(1);
    expect(processor.verifyFailures[0]).toEqual({ key: 'conv_a_turn_1', tier: 'cpu', offsetBytes: 100 });
  });

  it('lets timers run between the steps of a long request whose operations complete at once, so the window can close on it', async () => {
    // Four prefix blocks decoded over 1 M generated tokens: 125,000 in-memory reads, each resolved as a
    // promise. Without a turn of the event loop between them, nothing else (the window's deadline, the
    // heartbeat, a cancel) ran until the request ended. A zero-length slice pauses at every step.
    const stop = new AbortController();
    const { cpu, recorder, processor } = setup({ stop: stop.signal, eventLoopSlice: new EventLoopSlice(0) });
    const blocks = [0, 1, 2, 3].map((k) => ({ key: `blk_${k}`, tokens: 16 }));
    const done = processor.process(request({ prefixBlocks: blocks, generationTokens: 1_000_000 }), 0n);
    await new Promise((r) => setImmediate(r));
    stop.abort();
    await expect(done).rejects.toBeInstanceOf(RequestAbandoned);
    expect(recorder.requestsCompleted).toBe(0);
    expect(cpu.log.filter((l) => l.startsWith('read ')).length).toBeLessThan(100);
  });
});
