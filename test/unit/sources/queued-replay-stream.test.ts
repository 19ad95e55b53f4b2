import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunOptionsInput } from '../../../src-shared/domain/run-options.ts';
import { WORKLOAD_GENERATE_DEFAULTS, generateWorkload } from '../../../src-main/engine/workload/sources/workload-file.ts';
import { createWorkloadSource } from '../../../src-main/engine/workload/sources/create-source.ts';
import { RequestQueue } from '../../../src-main/engine/workload/request-queue.ts';
import type { KvRequest, RagDocument } from '../../../src-main/engine/workload/synthetic-workload.ts';
import type { WorkloadSource } from '../../../src-main/engine/workload/workload-source.ts';
import { AZURE_CONV, HAVE_TRACES, MOONCAKE_CONVERSATION, NO_TRACES_WHY, makeCtx, removeTempDirs, tempDir, writeBurst, writeShareGpt } from './helpers.ts';
import { skippedBecause } from '../../support/skip.ts';
import { plainRequest as plain, streamDigest as digestOf } from '../../support/request-stream.ts';

/**
 * A replay's arrivals wait in the open loop's queue compactly too (the numbers the file and the draws
 * fixed, and references to what is shared) and are built into requests when a worker takes them. What
 * the workers are handed must be exactly what the queue of full requests handed them: the same requests,
 * with the same contents, in the same order. The digests below were taken on kvbench 0.7.0's queue of
 * full replay requests (ReplayWorkload.next() pushed as it was, before replays queued compactly).
 */

afterEach(removeTempDirs);

const noTraces = skippedBecause(!HAVE_TRACES, `${NO_TRACES_WHY}: the queued Azure and Mooncake streams are not checked`);

const RAG_DOCS: RagDocument[] = Array.from({ length: 4 }, (_, d) => ({
  id: `doc_${d}`,
  tokens: 2048,
  chunks: Array.from({ length: 4 }, (_, c) => ({ key: `rag_doc_${d}_chunk_${c}`, tokens: 512 })),
}));

/** The scheduler's path: the source's queued form when it offers one, else the full request. */
function offer(src: WorkloadSource): Parameters<RequestQueue['push']>[0] {
  return src.nextQueued?.() ?? src.next();
}

/** Up to `max` arrivals, in arrival order, waiting for the replay's read-ahead as the scheduler does. */
async function arrivals(src: WorkloadSource, max: number, take: (src: WorkloadSource) => void): Promise<void> {
  const ready = (src as { ready?: () => Promise<void> }).ready?.bind(src);
  for (let i = 0; i < max; i++) {
    if (ready) await ready();
    if (src.peekArrivalNs() === Number.POSITIVE_INFINITY) return;
    take(src);
  }
}

/**
 * All arrivals queued first (a backlog, as behind a slow drive), then `workers` workers take requests in
 * turns; each is released (its entry written) a few takes later, so later turns are held and re-admitted.
 */
async function takenStream(src: WorkloadSource, max: number, workers: number): Promise<KvRequest[]> {
  const q = new RequestQueue();
  let i = 0;
  await arrivals(src, max, (s) => {
    const r = offer(s);
    r.submitNs = BigInt(i++) * 1000n;
    q.push(r);
  });
  const taken: KvRequest[] = [];
  const inService: KvRequest[] = [];
  while (q.depth > 0 || inService.length > 0) {
    for (let k = 0; k < workers && q.servable > 0; k++) {
      const r = await q.take();
      if (r === null) break;
      taken.push(r);
      inService.push(r);
    }
    while (inService.length > Math.min(2, workers - 1) || (q.depth > 0 && inService.length > 0 && taken.length % 3 === 0)) q.release(inService.shift()!);
    // Everything queued waits for a turn in service: that one writes its entry first.
    if (q.servable === 0 && inService.length > 0) q.release(inService.shift()!);
    if (q.depth === 0) for (const r of inService.splice(0)) q.release(r);
  }
  q.close();
  return taken;
}

interface Case {
  name: string;
  /** The run's options (the dataset written or named here). */
  options: () => RunOptionsInput;
  rag?: boolean;
  prepopulatedKeys?: string[];
  max: number;
  digest: string;
  /** The source's own digest of what it offered (unchanged by how the queue keeps it). */
  sourceDigest: string;
  realTrace?: boolean;
}

function burstRows(n: number): [number, number, number][] {
  return Array.from({ length: n }, (_, i) => [1000 + i * 0.37 + (i % 7 === 0 ? -0.5 : 0), (i * 977) % 14_000, (i * 31) % 900]);
}

function workloadFile(): string {
  const file = path.join(tempDir(), 'workload.json');
  const w = generateWorkload({ ...WORKLOAD_GENERATE_DEFAULTS, contexts: [2048, 4096], batches_per_context: 6, batch_sizes: [16, 32], prompt_pool_size: 6, reuse_start_batch: 2, delay_ms: 40, seed: 42 });
  fs.writeFileSync(file, JSON.stringify(w));
  return file;
}

const CASES: Case[] = [
  {
    name: 'ShareGPT, multi-turn, two cycles, paced, system prompts and RAG',
    options: () => ({ datasetPath: writeShareGpt(tempDir(), 200), numUsers: 6, requestRate: 200, replayCycles: 2 }),
    rag: true,
    max: 3000,
    digest: '54da426a64a49537b35baafc21f3ecf5c777480421ad3e1e556ee50251cbd318',
    sourceDigest: 'e94c2bf509bac981dd1fe446121f0c961b6a8f97cfedd2dd924acc7303826e16',
  },
  {
    name: 'ShareGPT, single-turn, unpaced, three cycles',
    options: () => ({ datasetPath: writeShareGpt(tempDir(), 150), numUsers: 3, disableMultiTurn: true, replayCycles: 3 }),
    max: 3000,
    digest: 'dede230b5505e57d8e9f2c668e8076a1df2a7ad4dca8fe256535416f426d4536',
    sourceDigest: 'e594464c8fd821ce29b60d172ce6d948aae5b91ac028588f774e353e1a873405',
  },
  {
    name: 'ShareGPT, decode-only with pre-populated keys',
    options: () => ({ datasetPath: writeShareGpt(tempDir(), 150), numUsers: 5, decodeOnly: true, requestRate: 50, replayCycles: 2 }),
    prepopulatedKeys: ['pre_0', 'pre_1', 'pre_2'],
    max: 3000,
    digest: 'd0da2f688bc5c2aa56dbd66d69cd74d1de6f9e0ac09fb77793f2e2b00e8fe631',
    sourceDigest: '2f8db8dcf37690b0841e9e1f3fd50d30420c38452530fd4f2bd8aebb64385ad3',
  },
  {
    name: 'BurstGPT, two cycles, prefill-only',
    options: () => ({ useBurstTrace: true, burstTracePath: writeBurst(tempDir(), burstRows(700)), traceSpeedup: 4, replayCycles: 2, prefillOnly: true }),
    max: 3000,
    digest: '9bbf8a9d8bdffe3e840209fce567fa1885e06d5707265a98075daed76729f174',
    sourceDigest: 'f53bae5bcf4474e7d692fae64b6e1628f0041120ea05f788ae2ec488b576fb7e',
  },
  {
    name: 'kvbench workload file, three cycles, RAG',
    options: () => ({ datasetPath: workloadFile(), traceSpeedup: 1, replayCycles: 3 }),
    rag: true,
    max: 3000,
    digest: 'fad837f47889a86b44af9fbdf872c5b03a634681b79771c6156c388ffffd4ab6',
    sourceDigest: '50d931291b6b7533f26674a51fa8e7e21ab9b34a4b6927ef8acee7e47d7a6b57',
  },
  {
    name: 'Mooncake conversation trace (real), prefix blocks',
    options: () => ({ datasetPath: MOONCAKE_CONVERSATION, traceSpeedup: 10, replayCycles: 1 }),
    max: 2500,
    digest: 'baed2070a9ed2b032414cfaa04885d64ec8f7dec461534c1119dcda93f31ef27',
    sourceDigest: 'f05760543ac04ba22d2576ca9ad14901b7886ac1a6ee491b982243758f3988e7',
    realTrace: true,
  },
  {
    name: 'Azure conversation trace (real)',
    options: () => ({ datasetPath: AZURE_CONV, traceSpeedup: 10, replayCycles: 1 }),
    max: 2500,
    digest: '990f2382a6c163ae3c41b8adb93615f00cb7a8c53ace74ef9f8f2dbc23ee987c',
    sourceDigest: '785bb8913b52352e30cdadb0ad818e625a66614e71e94dd70970ae459499ec1b',
    realTrace: true,
  },
];

describe('the open-loop queue hands workers the same replayed requests, in the same order', () => {
  for (const c of CASES) {
    it.skipIf(c.realTrace === true && noTraces)(c.name, async () => {
      const options = c.options();
      const ctx = () => makeCtx(options, { ragDocuments: c.rag ? RAG_DOCS : null, prepopulatedKeys: c.prepopulatedKeys ?? [] });
      const src = await createWorkloadSource(ctx());
      const stream = await takenStream(src, c.max, 4);
      expect(stream.length).toBeGreaterThan(500);
      // Every offered request is handed over once, with the contents the source offered for it.
      const offered = await createWorkloadSource(ctx());
      const bySeq = new Map<number, Record<string, unknown>>();
      let i = 0;
      await arrivals(offered, c.max, (s) => {
        const r = s.next();
        r.submitNs = BigInt(i++) * 1000n;
        bySeq.set(r.seq, plain(r));
      });
      expect(bySeq.size).toBe(stream.length);
      for (const r of stream) expect(plain(r)).toEqual(bySeq.get(r.seq));
      expect(src.digest()).toBe(offered.digest());
      // Priorities and held turns reorder the stream: the order is the queue's, not the arrivals'.
      expect(stream.map((r) => r.seq)).not.toEqual(stream.map((r) => r.seq).sort((a, b) => a - b));
      expect(digestOf(stream)).toBe(c.digest);
      expect(src.digest()).toBe(c.sourceDigest);
    });
  }

  it('replays offer their arrivals in the queued (compact) form', async () => {
    const src = await createWorkloadSource(makeCtx({ datasetPath: writeShareGpt(tempDir(), 5), requestRate: 10, replayCycles: 1 }));
    expect(src.nextQueued).toBeTypeOf('function');
  });
});
