// The preparatory phases (RAG ingestion, decode-only pre-population, preconditioning) over a real
// request processor and cache on memory tiers: what each writes, what it reports, and how a failed
// write is said.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KvbenchError } from '../../../src-shared/domain/errors.ts';
import { entryBytes, resolveModel, type ModelSpec } from '../../../src-shared/domain/models.ts';
import { GIB } from '../../../src-shared/domain/results.ts';
import { validateRunOptions, type RunOptions } from '../../../src-shared/domain/run-options.ts';
import { MultiTierCache } from '../../../src-main/engine/cache/multi-tier-cache.ts';
import { BytePool } from '../../../src-main/engine/io/byte-workers.ts';
import { PayloadPool } from '../../../src-main/engine/io/payload.ts';
import { RunRecorder } from '../../../src-main/engine/metrics/run-recorder.ts';
import { preparationError, prepopulatedKeysOf, ragDocuments, runPreparation, timedPhase } from '../../../src-main/engine/preparation.ts';
import { DECODE_ONLY_ENTRIES_PER_USER, PREPOPULATED_ENTRY_TOKENS } from '../../../src-main/engine/workload/personas.ts';
import { RequestProcessor } from '../../../src-main/engine/workload/request-processor.ts';
import { Semaphore } from '../../../src-main/engine/workload/request-queue.ts';
import { SYSTEM_PROMPT_REFS } from '../../../src-main/engine/workload/synthetic-workload.ts';
import { resolveWorkloadProfile } from '../../../src-main/engine/workload/workload-profile.ts';
import { MemoryTier, TerminalMemoryTier } from '../../support/memory-tier.ts';

const BYTES_PER_TOKEN = 16;

function options(raw: Record<string, unknown>): RunOptions {
  const v = validateRunOptions({ model: 'tiny-1b', cacheDir: '/tmp/unused', ...raw });
  if (!v.ok) throw new Error(v.errors.join('; '));
  return v.options;
}

function modelOf(name: string): ModelSpec {
  const r = resolveModel(name);
  if (!r.ok) throw new Error(r.error);
  return r.model;
}

const { profile } = resolveWorkloadProfile({});

let bytes: BytePool;
beforeAll(async () => {
  bytes = await BytePool.start({ threads: 0, pool: PayloadPool.create(1, 1024 * 1024) });
});
afterAll(async () => {
  await bytes.close();
});

function processorOver(storage: MemoryTier): { cache: MultiTierCache; processor: RequestProcessor } {
  const cache = new MultiTierCache([
    { backend: new MemoryTier('cpu', 4096), budgetBytes: 1 << 20 },
    { backend: storage, budgetBytes: 1 << 26 },
  ]);
  const processor = new RequestProcessor({
    cache,
    bytes,
    recorder: new RunRecorder({ interactive: 50, responsive: 100, batch: 1000 }),
    seed: 1,
    entrySizeBytes: (tokens) => tokens * BYTES_PER_TOKEN,
    modelBytesPerToken: BYTES_PER_TOKEN,
    allocations: new Semaphore(0),
    generationSecondsPerToken: 0,
    decodeBatchTokens: 32,
    verify: false,
    stopSignal: new AbortController().signal,
  });
  return { cache, processor };
}

function prepare(o: RunOptions, processor: RequestProcessor, extra: { signal?: AbortSignal; docs?: ReturnType<typeof ragDocuments> } = {}) {
  const logged: string[] = [];
  let preconditioningShown = 0;
  const facts = runPreparation({
    o,
    processor,
    docs: extra.docs !== undefined ? extra.docs : ragDocuments(modelOf('tiny-1b'), o, 7, profile),
    prepopulatedKeys: prepopulatedKeysOf(o),
    cacheDir: '/mnt/kv',
    storageCapacityBytes: 1 << 20,
    signal: extra.signal ?? new AbortController().signal,
    log: (_level, message) => logged.push(message),
    onPreconditioning: () => preconditioningShown++,
  });
  return { facts, logged, shown: () => preconditioningShown };
}

describe('the RAG documents', () => {
  it('exist only with --enable-rag and at least one document', () => {
    expect(ragDocuments(modelOf('tiny-1b'), options({}), 1, profile)).toBeNull();
    expect(ragDocuments(modelOf('tiny-1b'), options({ enableRag: true, ragNumDocs: 0 }), 1, profile)).toBeNull();
  });

  it('are the seed\'s, chunked so that every chunk fits the chunk limit and the chunks add up to the document', () => {
    const model = modelOf('tiny-1b');
    const o = options({ enableRag: true, ragNumDocs: 4 });
    const docs = ragDocuments(model, o, 7, profile)!;
    expect(docs.map((d) => d.id)).toEqual(['doc_0000', 'doc_0001', 'doc_0002', 'doc_0003']);
    expect(ragDocuments(model, o, 7, profile)).toEqual(docs);
    expect(ragDocuments(model, o, 8, profile)).not.toEqual(docs);
    // Drawn from a stream of their own: the user count does not change them.
    expect(ragDocuments(model, options({ enableRag: true, ragNumDocs: 4, numUsers: 3 }), 7, profile)).toEqual(docs);
    for (const d of docs) {
      expect(d.tokens).toBeGreaterThanOrEqual(profile.rag.smallModelDocTokens[0]);
      expect(d.tokens).toBeLessThanOrEqual(profile.rag.smallModelDocTokens[1]);
      expect(d.chunks.reduce((n, c) => n + c.tokens, 0)).toBe(d.tokens);
      expect(new Set(d.chunks.map((c) => c.key)).size).toBe(d.chunks.length);
      for (const c of d.chunks) expect(entryBytes(model, c.tokens)).toBeLessThanOrEqual(profile.rag.maxChunkBytes);
    }
  });

  it('are shorter for a large model', () => {
    const docs = ragDocuments(modelOf('llama3.1-70b-instruct'), options({ model: 'llama3.1-70b-instruct', enableRag: true, ragNumDocs: 8 }), 7, profile)!;
    const [min, max] = profile.rag.largeModelDocTokens;
    expect(docs.every((d) => d.tokens >= min && d.tokens <= max)).toBe(true);
  });
});

describe('the decode-only entries', () => {
  it('are ten per user with --decode-only, none without', () => {
    expect(prepopulatedKeysOf(options({ decodeOnly: true, numUsers: 3 }))).toHaveLength(3 * DECODE_ONLY_ENTRIES_PER_USER);
    expect(prepopulatedKeysOf(options({ numUsers: 3 }))).toEqual([]);
  });
});

describe('a timed phase', () => {
  it('counts each write and its bytes; `wrote` gives the bytes so far', async () => {
    const totals: number[] = [];
    const facts = await timedPhase('testing', '/mnt/kv', async (wrote) => {
      totals.push(wrote({ bytes: 100 }), wrote({ bytes: 0 }), wrote({ bytes: 50 }));
    });
    expect(totals).toEqual([100, 100, 150]);
    expect(facts).toMatchObject({ entries: 3, bytes: 150 });
    expect(facts.elapsedNs).toBeGreaterThanOrEqual(0);
  });

  it('turns a failed write into an error that says the phase and how far it got', async () => {
    const failing = timedPhase('preconditioning', '/mnt/kv', async (wrote) => {
      wrote({ bytes: GIB / 2 });
      throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
    });
    await expect(failing).rejects.toMatchObject({ code: 'DISK_FULL', message: 'disk full (ENOSPC) on /mnt/kv while preconditioning, after 1 entries (0.50 GiB); nothing was measured' });
  });
});

describe('a failed preparatory write', () => {
  it('is DISK_FULL naming the cache directory when the disk filled', () => {
    const e = preparationError('ingesting the RAG documents', Object.assign(new Error('ENOSPC'), { code: 'ENOSPC' }), '/data/kv', { entries: 4, bytes: 3 * GIB });
    expect(e).toBeInstanceOf(KvbenchError);
    expect(e.code).toBe('DISK_FULL');
    expect(e.message).toBe('disk full (ENOSPC) on /data/kv while ingesting the RAG documents, after 4 entries (3.00 GiB); nothing was measured');
  });

  it('keeps any other error\'s code (INTERNAL for an unknown one) and message', () => {
    const known = preparationError('preconditioning', new KvbenchError('TARGET_NOT_WRITABLE', 'read-only file system'), '/data/kv', { entries: 0, bytes: 0 });
    expect(known.code).toBe('TARGET_NOT_WRITABLE');
    expect(known.message).toBe('preconditioning failed after 0 entries (0.00 GiB); nothing was measured: read-only file system');
    expect(preparationError('preconditioning', Object.assign(new Error('EIO'), { code: 'EIO' }), '/data/kv', { entries: 0, bytes: 0 }).code).toBe('INTERNAL');
  });
});

describe('the preparatory phases', () => {
  it('run none without the options that ask for them', async () => {
    const storage = new TerminalMemoryTier('storage', 4096);
    const { processor } = processorOver(storage);
    const { facts, logged, shown } = prepare(options({}), processor);
    expect(await facts).toEqual({ ragIngestion: null, decodeOnlyPrepopulation: null, precondition: null });
    expect(logged).toEqual([]);
    expect(shown()).toBe(0);
  });

  it('ingest every chunk of every RAG document, and report what they wrote', async () => {
    const { cache, processor } = processorOver(new TerminalMemoryTier('storage', 4096));
    const o = options({ enableRag: true, ragNumDocs: 2 });
    const docs = ragDocuments(modelOf('tiny-1b'), o, 7, profile)!;
    const chunks = docs.flatMap((d) => d.chunks);
    const { facts, logged } = prepare(o, processor, { docs });
    const f = await facts;
    expect(f.ragIngestion).toMatchObject({ entries: chunks.length, bytes: chunks.reduce((n, c) => n + c.tokens * BYTES_PER_TOKEN, 0) });
    expect(f.decodeOnlyPrepopulation).toBeNull();
    expect(chunks.every((c) => cache.has(c.key))).toBe(true);
    expect(logged).toEqual(['ingesting 2 RAG documents through the normal write path']);
  });

  it('pre-populate a decode-only run\'s entries and the shared system prompts (not with prefix caching off)', async () => {
    const { cache, processor } = processorOver(new TerminalMemoryTier('storage', 4096));
    const o = options({ decodeOnly: true, numUsers: 2 });
    const { facts, shown } = prepare(o, processor);
    const f = await facts;
    const keys = prepopulatedKeysOf(o);
    const promptBytes = SYSTEM_PROMPT_REFS.reduce((n, p) => n + p.tokens * BYTES_PER_TOKEN, 0);
    expect(f.decodeOnlyPrepopulation).toMatchObject({ entries: keys.length + SYSTEM_PROMPT_REFS.length, bytes: keys.length * PREPOPULATED_ENTRY_TOKENS * BYTES_PER_TOKEN + promptBytes });
    expect(keys.every((k) => cache.has(k)) && SYSTEM_PROMPT_REFS.every((p) => cache.has(p.key))).toBe(true);
    expect(shown()).toBe(1);

    const off = processorOver(new TerminalMemoryTier('storage', 4096));
    const g = await prepare(options({ decodeOnly: true, numUsers: 2, disablePrefixCaching: true }), off.processor).facts;
    expect(g.decodeOnlyPrepopulation?.entries).toBe(keys.length);
    expect(SYSTEM_PROMPT_REFS.some((p) => off.cache.has(p.key))).toBe(false);
  });

  it('precondition until the target is written, stating the target and the writers', async () => {
    const { processor } = processorOver(new TerminalMemoryTier('storage', 4096));
    const entry = PREPOPULATED_ENTRY_TOKENS * BYTES_PER_TOKEN;
    const o = options({ precondition: true, preconditionSizeGb: (3.5 * entry) / GIB, preconditionThreads: 1 });
    const { facts, logged, shown } = prepare(o, processor);
    const p = (await facts).precondition!;
    expect(p).toMatchObject({ entries: 4, bytes: 4 * entry, targetBytes: Math.floor(3.5 * entry), threads: 1 });
    expect(logged[0]).toMatch(/^preconditioning: writing 0\.0 GiB with 1 writers$/);
    expect(shown()).toBe(1);
  });

  it('precondition twice the storage capacity when no size is given', async () => {
    const { processor } = processorOver(new TerminalMemoryTier('storage', 4096));
    const p = (await prepare(options({ precondition: true, preconditionThreads: 2 }), processor).facts).precondition!;
    expect(p.targetBytes).toBe(2 * (1 << 20));
    expect(p.bytes).toBeGreaterThanOrEqual(p.targetBytes);
  });

  it('stop starting writes once cancelled', async () => {
    const { processor } = processorOver(new TerminalMemoryTier('storage', 4096));
    const cancelled = new AbortController();
    cancelled.abort();
    const f = await prepare(options({ precondition: true, decodeOnly: true, numUsers: 2, disablePrefixCaching: true, preconditionThreads: 2 }), processor, { signal: cancelled.signal }).facts;
    expect(f.decodeOnlyPrepopulation?.entries).toBe(0);
    expect(f.precondition?.entries).toBe(0);
  });
});
