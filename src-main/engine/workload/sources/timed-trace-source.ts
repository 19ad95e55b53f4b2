import type { ReplayWorkloadOptions } from './replay-source.ts';
import { ReplayWorkload } from './replay-source.ts';
import { replayOptions, TRACE_USERS, traceUserId, type SourceContext } from './source-context.ts';
import { scanTimedTrace, TimedTraceFeed, type TimedTraceFormat } from './timed-trace.ts';

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
    toSpec: (row, at) => {
      const userId = traceUserId(at.seq);
      const key = `${userId}_req_${String(at.seq).padStart(o.keyDigits, '0')}`;
      return {
        arrivalNs: at.arrivalNs,
        cycle: at.cycle,
        userIndex: at.seq % TRACE_USERS,
        userId,
        requestId: key,
        contextTokens: Math.max(1, row.contextTokens),
        generationTokens: row.generationTokens,
        cacheKey: key,
        conversationId: null,
        turn: 1,
        previousTurnKeys: [],
        prefixBlocks: null,
      };
    },
  });
  return ReplayWorkload.start(feed, replayOptions(ctx, o.kind, opts.traceSpeedup > 0, true));
}
