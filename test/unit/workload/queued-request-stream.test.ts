import { describe, expect, it } from 'vitest';
import { SyntheticWorkload, type KvRequest, type RagDocument, type SyntheticWorkloadOptions } from '../../../src-main/engine/workload/synthetic-workload.ts';
import { RequestQueue } from '../../../src-main/engine/workload/request-queue.ts';
import { plainRequest as plain, streamDigest as digestOf } from '../../support/request-stream.ts';

/**
 * The open loop's queue keeps its arrivals compactly and builds each request when a worker takes it.
 * What the workers are handed must be exactly what the queue of full requests handed them: the same
 * requests, with the same contents, in the same order, for a seed. The digests below were taken on the
 * queue of full requests (kvbench 0.7.0, before the compaction).
 */

const RAG_DOCS: RagDocument[] = Array.from({ length: 4 }, (_, d) => ({
  id: `doc_${d}`,
  tokens: 2048,
  chunks: Array.from({ length: 4 }, (_, c) => ({ key: `rag_doc_${d}_chunk_${c}`, tokens: 512 })),
}));

function options(extra: Partial<SyntheticWorkloadOptions>): SyntheticWorkloadOptions {
  return { seed: 42, numUsers: 60, multiTurn: true, prefixCaching: true, mode: 'standard', ragDocuments: RAG_DOCS, prepopulatedKeys: [], ...extra };
}

/**
 * A scheduler and `workers` workers, without I/O: all arrivals are queued first (a backlog, as behind a
 * slow drive), then the workers take requests in turns; each request is released (its entry written) two
 * takes after it was taken, so later turns are held and re-admitted on the way.
 */
async function takenStream(opts: SyntheticWorkloadOptions, arrivals: number, workers: number): Promise<KvRequest[]> {
  const w = new SyntheticWorkload(opts);
  const q = new RequestQueue();
  for (let i = 0; i < arrivals; i++) {
    // The scheduler's path: the source's compact arrival, built into a request when a worker takes it.
    const r = w.nextQueued();
    r.submitNs = BigInt(i) * 1000n;
    q.push(r);
  }
  const taken: KvRequest[] = [];
  const inService: KvRequest[] = [];
  while (q.depth > 0 || inService.length > 0) {
    for (let k = 0; k < workers && q.depth > 0; k++) {
      const r = await q.take();
      if (r === null) break;
      taken.push(r);
      inService.push(r);
    }
    // Two in service at most wait for their write; the oldest is released.
    while (inService.length > Math.min(2, workers - 1) || (q.depth > 0 && inService.length > 0 && taken.length % 3 === 0)) q.release(inService.shift()!);
    if (q.depth > 0 && inService.length === workers) q.release(inService.shift()!);
    if (q.depth === 0) for (const r of inService.splice(0)) q.release(r);
  }
  q.close();
  return taken;
}

const CASES: { name: string; opts: SyntheticWorkloadOptions; digest: string }[] = [
  { name: 'multi-turn, prefix caching, RAG', opts: options({}), digest: 'f2714eb9efa1e45a81f6e215b45cdb667ca5fd1d05fdd911afebdf7f1790986d' },
  { name: 'multi-turn with more users than tracked conversations', opts: options({ numUsers: 1200, ragDocuments: null }), digest: 'a29584084301e1433dac3ca655268ad41fb4155b7ceb97c59b8599b2496669a4' },
  { name: 'single-turn', opts: options({ multiTurn: false }), digest: '071ce44ebd837bcba4f4817c91f4117ac08ef1827603b71ccb64bfa9514dd028' },
  { name: 'decode-only with pre-populated keys', opts: options({ mode: 'decode-only', prepopulatedKeys: ['pre_0', 'pre_1', 'pre_2'] }), digest: '11bcd15e418e0a6d601038e2e354f3ba615a81be0f7b8de22c05fd664415565a' },
  { name: 'prefill-only', opts: options({ mode: 'prefill-only', prefixCaching: false }), digest: 'a1ad054a8bc22af9c16b3d8cda6b54038f52e4c819788d8551a4dc142de0998e' },
];

describe('the open-loop queue hands workers the same requests, in the same order, for a seed', () => {
  for (const c of CASES) {
    it(c.name, async () => {
      const stream = await takenStream(c.opts, 3000, 4);
      expect(stream).toHaveLength(3000);
      // Every offered request is handed over once, with the contents the source offered for it.
      const offered = new SyntheticWorkload(c.opts);
      const bySeq = new Map(Array.from({ length: 3000 }, (_, i) => { const r = offered.next(); r.submitNs = BigInt(i) * 1000n; return [r.seq, plain(r)] as const; }));
      for (const r of stream) expect(plain(r)).toEqual(bySeq.get(r.seq));
      // Priorities and held turns reorder the stream: the order is the queue's, not the arrivals'.
      expect(stream.map((r) => r.seq)).not.toEqual(stream.map((r) => r.seq).sort((a, b) => a - b));
      expect(digestOf(stream)).toBe(c.digest);
    });
  }
});
