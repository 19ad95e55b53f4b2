/**
 * The preparatory phases of a run, before its workload starts: RAG ingestion, decode-only
 * pre-population and preconditioning. They write through the normal write path (the request
 * processor), but their I/O is excluded from the measured statistics and reported apart, as
 * PreparationFacts. A write that fails ends the run, as in the measured phase.
 */
import os from 'node:os';
import { KvbenchError, toErrorData } from '../../src-shared/domain/errors.ts';
import { entryBytes, type ModelSpec } from '../../src-shared/domain/models.ts';
import { GIB } from '../../src-shared/domain/results.ts';
import type { RunOptions } from '../../src-shared/domain/run-options.ts';
import type { PhaseFacts, PreparationFacts } from './report/results-builder.ts';
import { runConcurrently, runLoops } from './run-loops.ts';
import { DECODE_ONLY_ENTRIES_PER_USER, PREPOPULATED_ENTRY_TOKENS } from './workload/personas.ts';
import type { RequestProcessor } from './workload/request-processor.ts';
import { Rng } from './workload/rng.ts';
import { SYSTEM_PROMPT_REFS, type RagDocument } from './workload/synthetic-workload.ts';
import type { WorkloadProfile } from './workload/workload-profile.ts';

/** The RAG documents of a run with --enable-rag (null without): ingested before, looked up during the run. */
export function ragDocuments(model: ModelSpec, o: RunOptions, seed: number, profile: WorkloadProfile): RagDocument[] | null {
  if (!o.enableRag || o.ragNumDocs <= 0) return null;
  // A stream of its own (index 0; users use 1..n), so documents do not depend on the user count.
  const rng = new Rng(seed, 0);
  const large = model.hiddenSize >= 8192 || model.layers >= 64;
  const perToken = entryBytes(model, 1, o.tensorParallel);
  const rag = profile.rag;
  const chunkTokens = Math.max(1, Math.min(rag.chunkTokens, Math.floor(rag.maxChunkBytes / Math.max(1, perToken))));
  const docs: RagDocument[] = [];
  for (let i = 0; i < o.ragNumDocs; i++) {
    const range = large ? rag.largeModelDocTokens : rag.smallModelDocTokens;
    const tokens = rng.int(range[0], range[1]);
    const id = `doc_${String(i).padStart(4, '0')}`;
    const chunks = [];
    for (let c = 0, left = tokens; left > 0; c++, left -= chunkTokens) {
      chunks.push({ key: `rag_${id}_chunk_${c}`, tokens: Math.min(chunkTokens, left) });
    }
    docs.push({ id, tokens, chunks });
  }
  return docs;
}

/** The entries a --decode-only run reads: written before it starts (none without the flag). */
export function prepopulatedKeysOf(o: RunOptions): string[] {
  return o.decodeOnly ? Array.from({ length: o.numUsers * DECODE_ONLY_ENTRIES_PER_USER }, (_, i) => `prepop_${i}`) : [];
}

/**
 * A failed write of a preparatory phase: a full disk is DISK_FULL naming the cache directory, in the
 * measured phase's words; any other error keeps its code and says which phase it stopped. The run
 * fails (no workload ran), where a full disk in the workload ends it partial, with its results.
 */
export function preparationError(phase: string, err: unknown, cacheDir: string, done: { entries: number; bytes: number }): KvbenchError {
  const e = toErrorData(err);
  const progress = `after ${done.entries} entries (${(done.bytes / GIB).toFixed(2)} GiB); nothing was measured`;
  if ((err as NodeJS.ErrnoException).code === 'ENOSPC') return new KvbenchError('DISK_FULL', `disk full (ENOSPC) on ${cacheDir} while ${phase}, ${progress}`);
  return new KvbenchError(e.code, `${phase} failed ${progress}: ${e.message}`);
}

/**
 * Times a phase and counts what it writes. `wrote` is called with each write's result after its
 * await (`bytes += await …` would add to a stale value) and returns the phase's bytes so far.
 * A write that fails ends the run: a full disk is DISK_FULL, named.
 */
export async function timedPhase(phase: string, cacheDir: string, body: (wrote: (w: { bytes: number }) => number) => Promise<void>): Promise<PhaseFacts> {
  const start = process.hrtime.bigint();
  let entries = 0;
  let bytes = 0;
  try {
    await body((w) => {
      entries++;
      return (bytes += w.bytes);
    });
  } catch (err) {
    throw preparationError(phase, err, cacheDir, { entries, bytes });
  }
  return { entries, bytes, elapsedNs: Number(process.hrtime.bigint() - start) };
}

export interface PreparationInput {
  o: RunOptions;
  /** Writes one entry through the normal write path. */
  processor: Pick<RequestProcessor, 'allocate'>;
  docs: RagDocument[] | null;
  prepopulatedKeys: string[];
  /** The cache directory, named when the disk fills. */
  cacheDir: string;
  /** The storage tier's capacity: preconditioning writes twice it unless --precondition-size-gb says. */
  storageCapacityBytes: number;
  /** A cancel stops the concurrent phases from starting more writes. */
  signal: AbortSignal;
  log: (level: 'info', message: string) => void;
  /** Told when a phase that shows as preconditioning begins. */
  onPreconditioning: () => void;
}

/** Runs the preparatory phases the options ask for, in order, and says what each wrote and how fast. */
export async function runPreparation(p: PreparationInput): Promise<PreparationFacts> {
  const { o, processor, docs, log } = p;
  const preparation: PreparationFacts = { ragIngestion: null, decodeOnlyPrepopulation: null, precondition: null };
  if (docs) {
    log('info', `ingesting ${docs.length} RAG documents through the normal write path`);
    preparation.ragIngestion = await timedPhase('ingesting the RAG documents', p.cacheDir, async (wrote) => {
      for (const doc of docs) for (const c of doc.chunks) wrote(await processor.allocate(c.key, c.tokens));
    });
  }
  if (o.decodeOnly) {
    log('info', `pre-populating ${p.prepopulatedKeys.length} entries of ${PREPOPULATED_ENTRY_TOKENS} tokens for the decode-only run`);
    p.onPreconditioning();
    preparation.decodeOnlyPrepopulation = await timedPhase('pre-populating for the decode-only run', p.cacheDir, async (wrote) => {
      await runConcurrently(p.prepopulatedKeys, Math.max(2, os.availableParallelism()), async (key) => {
        if (!p.signal.aborted) wrote(await processor.allocate(key, PREPOPULATED_ENTRY_TOKENS));
      });
      // The shared system prompts too: a read-only run's prefix lookups hit instead of writing them.
      if (!o.disablePrefixCaching) for (const prompt of SYSTEM_PROMPT_REFS) wrote(await processor.allocate(prompt.key, prompt.tokens));
    });
  }
  if (o.precondition) {
    const targetBytes = o.preconditionSizeGb > 0 ? Math.floor(o.preconditionSizeGb * GIB) : 2 * p.storageCapacityBytes;
    const threads = o.preconditionThreads > 0 ? o.preconditionThreads : os.availableParallelism();
    log('info', `preconditioning: writing ${(targetBytes / GIB).toFixed(1)} GiB with ${threads} writers`);
    p.onPreconditioning();
    const phase = await timedPhase('preconditioning', p.cacheDir, async (wrote) => {
      let written = 0;
      let n = 0;
      await runLoops(threads, async () => {
        if (written >= targetBytes || p.signal.aborted) return false;
        written = wrote(await processor.allocate(`precond_${n++}`, PREPOPULATED_ENTRY_TOKENS));
        return true;
      });
    });
    preparation.precondition = { ...phase, targetBytes, threads };
  }
  return preparation;
}
