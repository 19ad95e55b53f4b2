import { z } from 'zod';
import { MAX_CONTEXT_TOKENS, MAX_GENERATION_TOKENS } from '../../../../src-shared/domain/workload-file.ts';
import { inputError } from './input-errors.ts';
import { blocksOf, cyclePrefix, ReplayWorkload, type ReplayNames } from './replay-source.ts';
import { replayOptions, TRACE_USERS, traceUserId, type SourceContext } from './source-context.ts';
import { scanTimedTrace, TimedTraceFeed, TraceRowSpec, type TimedTraceFormat } from './timed-trace.ts';

/** Tokens per hash ID in the Mooncake traces. */
export const MOONCAKE_BLOCK_TOKENS = 512;

const MooncakeRecordSchema = z.looseObject({
  timestamp: z.number({ error: 'timestamp must be a number (ms from the start)' }).nonnegative({ error: 'timestamp cannot be negative' }),
  input_length: z
    .number({ error: 'input_length must be a number' })
    .int({ error: 'input_length must be an integer' })
    .positive({ error: 'input_length must be positive' })
    .max(MAX_CONTEXT_TOKENS, { error: `input_length must be at most ${MAX_CONTEXT_TOKENS.toLocaleString('en-US')} (longer than any model's context)` }),
  output_length: z
    .number({ error: 'output_length must be a number' })
    .int({ error: 'output_length must be an integer' })
    .nonnegative({ error: 'output_length cannot be negative' })
    .max(MAX_GENERATION_TOKENS, { error: `output_length must be at most ${MAX_GENERATION_TOKENS.toLocaleString('en-US')} (more than any model's context holds)` }),
  hash_ids: z
    .array(z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER), { error: 'hash_ids must be an array of non-negative integers' })
    .min(1, { error: 'hash_ids cannot be empty' }),
});

export const MOONCAKE_FORMAT: TimedTraceFormat = {
  label: 'Mooncake JSON Lines trace',
  fileParser: (file) => (line) => {
    if (line.text.trim() === '') return null;
    let value: unknown;
    try {
      value = JSON.parse(line.text);
    } catch (err) {
      throw inputError(file, line.lineNo, `not valid JSON (truncated line?): ${(err as Error).message}`);
    }
    const r = MooncakeRecordSchema.safeParse(value);
    if (!r.success) {
      const first = r.error.issues[0];
      const where = first.path.length > 0 ? `${first.path.join('.')}: ` : '';
      throw inputError(file, line.lineNo, `not a Mooncake record (timestamp, input_length, output_length, hash_ids): ${where}${first.message}`);
    }
    const rec = r.data;
    const needed = Math.ceil(rec.input_length / MOONCAKE_BLOCK_TOKENS);
    if (rec.hash_ids.length !== needed) {
      throw inputError(
        file,
        line.lineNo,
        `hash_ids lists ${rec.hash_ids.length} block(s) but input_length ${rec.input_length} needs ${needed} blocks of ${MOONCAKE_BLOCK_TOKENS} tokens`,
      );
    }
    return { t: rec.timestamp / 1000, contextTokens: rec.input_length, generationTokens: rec.output_length, hashIds: rec.hash_ids };
  },
};

/**
 * Mooncake trace replay (detected from `--dataset-path`'s content). Each hash ID is one 512-token KV
 * block (the last one shorter, so a request's blocks add up to its input length), stored as its own
 * cache entry `mc_block_<id>`: requests that share a prefix share those entries, so the prefix-block hit
 * rate measures how much prompt KV the tiers served instead of recomputing. Arrival = timestamp (ms)
 * ÷ `--trace-speedup`. The synthetic system prompts are not drawn: the trace's prefixes are explicit.
 */
export async function createMooncakeSource(ctx: SourceContext, file: string): Promise<ReplayWorkload> {
  const o = ctx.options;
  const scan = await scanTimedTrace([file], MOONCAKE_FORMAT);
  const feed = new TimedTraceFeed([file], MOONCAKE_FORMAT, scan, {
    formatName: 'mooncake-jsonl',
    speedup: o.traceSpeedup,
    replayCycles: o.replayCycles,
    activeUsers: (issued) => Math.min(issued, TRACE_USERS),
    describeExtra: () => ({
      block_tokens: MOONCAKE_BLOCK_TOKENS,
      trace_blocks: scan.blocks?.total ?? 0,
      trace_distinct_blocks: scan.blocks?.distinct ?? null,
      /** 1 − distinct ÷ listed over the whole trace: the prefix-block hit rate of an unbounded cache. */
      trace_ideal_block_hit_rate: scan.blocks && scan.blocks.distinct !== null && scan.blocks.total > 0 ? 1 - scan.blocks.distinct / scan.blocks.total : null,
    }),
    toSpec: (row, at) => new MooncakeSpec(at.arrivalNs, at.cycle, at.seq, at.rowInCycle, row.contextTokens, row.generationTokens, row.hashIds!),
  });
  return ReplayWorkload.start(feed, replayOptions(ctx, 'mooncake', o.traceSpeedup > 0, false));
}

/**
 * One Mooncake row as replayed: its own entry `[c{n}_]mc_req_{row}`, and its hash IDs (the parsed row's
 * array, kept as numbers) as prefix blocks `[c{n}_]mc_block_{id}`.
 */
class MooncakeSpec extends TraceRowSpec {
  readonly #rowInCycle: number;
  readonly #hashIds: readonly number[];

  constructor(arrivalNs: number, cycle: number, seq: number, rowInCycle: number, contextTokens: number, generationTokens: number, hashIds: readonly number[]) {
    super(arrivalNs, cycle, seq, contextTokens, generationTokens);
    this.#rowInCycle = rowInCycle;
    this.#hashIds = hashIds;
  }

  override get prefixBlockCount(): number {
    return this.#hashIds.length;
  }

  names(): ReplayNames {
    const prefix = cyclePrefix(this.cycle);
    const userId = traceUserId(this.seq);
    return {
      userId,
      requestId: `${userId}_req_${String(this.seq).padStart(6, '0')}`,
      cacheKey: `${prefix}mc_req_${this.#rowInCycle}`,
      prefixBlocks: blocksOf(this.#hashIds, this.contextTokens, MOONCAKE_BLOCK_TOKENS, (id) => `${prefix}mc_block_${id}`),
    };
  }
}
