import type { ReplayWorkloadOptions } from './replay-source.ts';
import { ReplayWorkload, type ReplayNames } from './replay-source.ts';
import { replayOptions, TRACE_USERS, traceUserId, type SourceContext } from './source-context.ts';
import { scanTimedTrace, TimedTraceFeed, TraceRowSpec, type TimedTraceFormat } from './timed-trace.ts';

/**
 * Replays a timestamped request trace (BurstGPT, Azure): one single-turn request per row, paced by the
 * timestamps ÷ --trace-speedup, spread over the reference's trace users.
 */
export async function replayTimedTrace(
  ctx: SourceContext,
  files: string[],
  format: TimedTraceFormat,
  o: { formatName: string; kind: ReplayWorkloadOptions['kind']; keyDigits: number },
): Promise<ReplayWorkload> {
  const opts = ctx.options;
  const scan = await scanTimedTrace(files, format);
  const feed = new TimedTraceFeed(files, format, scan, {
    formatName: o.formatName,
    speedup: opts.traceSpeedup,
    replayCycles: opts.replayCycles,
    activeUsers: (issued) => Math.min(issued, TRACE_USERS),
    toSpec: (row, at) => new TraceRequestSpec(at.arrivalNs, at.cycle, at.seq, Math.max(1, row.contextTokens), row.generationTokens, o.keyDigits),
  });
  return ReplayWorkload.start(feed, replayOptions(ctx, o.kind, opts.traceSpeedup > 0, true));
}

/** A BurstGPT or Azure row as replayed: its own entry `trace_user_{u}_req_{seq}` (later passes never reuse a key). */
class TraceRequestSpec extends TraceRowSpec {
  /** Digits the key's sequence number is padded to (the reference's: 4 for BurstGPT, 6 for Azure). */
  readonly #keyDigits: number;

  constructor(arrivalNs: number, cycle: number, seq: number, contextTokens: number, generationTokens: number, keyDigits: number) {
    super(arrivalNs, cycle, seq, contextTokens, generationTokens);
    this.#keyDigits = keyDigits;
  }

  names(): ReplayNames {
    const userId = traceUserId(this.seq);
    const key = `${userId}_req_${String(this.seq).padStart(this.#keyDigits, '0')}`;
    return { userId, requestId: key, cacheKey: key, prefixBlocks: null };
  }
}
