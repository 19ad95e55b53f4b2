// The contents of requests as workers are handed them, for tests that compare request streams.
import { createHash } from 'node:crypto';
import type { KvRequest } from '../../src-main/engine/workload/synthetic-workload.ts';

/** Every field of a request, as plain data (its submit time as a string). */
export function plainRequest(r: KvRequest): Record<string, unknown> {
  return {
    seq: r.seq,
    id: r.id,
    userIndex: r.userIndex,
    userId: r.userId,
    qos: r.qos,
    priority: r.priority,
    arrivalNs: r.arrivalNs,
    submitNs: String(r.submitNs),
    contextTokens: r.contextTokens,
    generationTokens: r.generationTokens,
    phase: r.phase,
    cacheKey: r.cacheKey,
    conversationId: r.conversationId,
    turn: r.turn,
    previousTurnKeys: [...r.previousTurnKeys],
    systemPrompt: r.systemPrompt ? { ...r.systemPrompt } : null,
    ragChunks: r.ragChunks ? r.ragChunks.map((c) => ({ ...c })) : null,
    decodeKey: r.decodeKey,
    cacheType: r.cacheType,
    prefixBlocks: r.prefixBlocks ? r.prefixBlocks.map((b) => ({ ...b })) : null,
  };
}

/** sha256 of a stream of requests, every field, in order. */
export function streamDigest(stream: readonly KvRequest[]): string {
  const h = createHash('sha256');
  for (const r of stream) h.update(`${JSON.stringify(plainRequest(r))}\n`);
  return h.digest('hex');
}
