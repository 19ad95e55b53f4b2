// What a queueing-bound run's workers spent their time on, and so what bound it: the one rule the
// engine's live warning and results note and the app's live alert name the bound by.
//
// A worker holds a request from the queue's hand-over to its completion: its cache operations (the
// tiers' reads and writes, and the waits around them: write admission, room in a tier, an entry
// another request is writing, promotions), then the simulated generation sleep (reference behaviour:
// the generation runs inside the worker). A queue that outgrows the workers says the offered load is
// more than they serve, not which of the two held them: on an H200 with the GPU tier, 50 users and
// realistic generation, 96 % of the workers' time was the generation sleep and the drive read nothing,
// yet every message blamed the storage. Measured sums name it instead.
import { z } from 'zod';
import { groupedFixed } from './number-text.ts';
import { TIER_NAMES, TIER_WORDS, type TierName } from './tiers.ts';

const ns = z.number().nonnegative();

/**
 * The workers' busy time, summed over completed requests, in ns (the engine's RunRecorder sums it per
 * request, as its per-request histograms record them; abandoned requests are not in it).
 */
export const WorkersBusyNsSchema = z.object({
  /** The completed requests summed. */
  requests: z.number().int().nonnegative(),
  /** Hand-over from the queue to completion. */
  totalNs: ns,
  /** The tiers' own operation time (the per-request cache I/O, the reference's "storage latency"), every tier's. */
  cacheIoNs: ns,
  /** cacheIoNs by the tier each operation was served by (a write: the tier it was placed in). */
  cacheIoByTierNs: z.object({ gpu: ns, cpu: ns, storage: ns }),
  /** The simulated generation sleeps, as slept. */
  generationNs: ns,
});
export type WorkersBusyNs = z.infer<typeof WorkersBusyNsSchema>;

/** The simulated generation a run was configured with: its mode and time per generated token. */
export const GenerationPaceSchema = z.object({ mode: z.string(), nsPerToken: ns });
export type GenerationPace = z.infer<typeof GenerationPaceSchema>;

export const noWorkersBusy = (): WorkersBusyNs => ({ requests: 0, totalNs: 0, cacheIoNs: 0, cacheIoByTierNs: { gpu: 0, cpu: 0, storage: 0 }, generationNs: 0 });

/** a + b, a new object (the warm-up's sums and the window's, for the live view). */
export function addWorkersBusy(a: WorkersBusyNs, b: WorkersBusyNs): WorkersBusyNs {
  return {
    requests: a.requests + b.requests,
    totalNs: a.totalNs + b.totalNs,
    cacheIoNs: a.cacheIoNs + b.cacheIoNs,
    cacheIoByTierNs: { gpu: a.cacheIoByTierNs.gpu + b.cacheIoByTierNs.gpu, cpu: a.cacheIoByTierNs.cpu + b.cacheIoByTierNs.cpu, storage: a.cacheIoByTierNs.storage + b.cacheIoByTierNs.storage },
    generationNs: a.generationNs + b.generationNs,
  };
}

/**
 * The share of the busy time from which simulated generation, not the cache, bounds the queue. At
 * half or more the generation sleep is what a worker mostly holds a request for, so a faster cache
 * would not shorten the queue much (at most by the rest); below it the cache side (its I/O and the
 * waits around it) took the larger part.
 */
export const GENERATION_BOUND_SHARE = 0.5;

/** What bound the workers, as shares of the completed requests' busy time (totalNs). */
export interface BusySplit {
  requests: number;
  /** 'generation' when generationShare ≥ GENERATION_BOUND_SHARE, else 'cache'. */
  bound: 'generation' | 'cache';
  generationShare: number;
  cacheIoShare: number;
  /** The rest: the waits around the cache operations (admission, room in a tier, entries being written, promotions) and event-loop turns. */
  otherShare: number;
  /** The tier that served at least half of the cache I/O time, with its share of it; null when none did. */
  cacheIoTier: { tier: TierName; share: number } | null;
}

/** The split of `b`; null without a completed request's time to split (none completed, or an older engine's event). */
export function busySplit(b: WorkersBusyNs | null | undefined): BusySplit | null {
  if (!b || b.requests === 0 || b.totalNs <= 0) return null;
  const share = (v: number): number => Math.min(1, Math.max(0, v / b.totalNs));
  const generationShare = share(b.generationNs);
  const cacheIoShare = share(b.cacheIoNs);
  const top = TIER_NAMES.reduce((best, t) => (b.cacheIoByTierNs[t] > b.cacheIoByTierNs[best] ? t : best), TIER_NAMES[0]);
  const topShare = b.cacheIoNs > 0 ? b.cacheIoByTierNs[top] / b.cacheIoNs : 0;
  return {
    requests: b.requests,
    bound: generationShare >= GENERATION_BOUND_SHARE ? 'generation' : 'cache',
    generationShare,
    cacheIoShare,
    otherShare: Math.max(0, 1 - generationShare - cacheIoShare),
    cacheIoTier: topShare >= 0.5 ? { tier: top, share: topShare } : null,
  };
}

/** A share as a whole percentage; a share that rounds to 0 but is not 0 reads "under 1 %". */
export const percentText = (share: number): string => (share > 0 && share < 0.005 ? 'under 1 %' : `${Math.round(share * 100)} %`);

/** "realistic, 30 ms/token" */
export const generationPaceText = (g: GenerationPace): string => `${g.mode}, ${Number((g.nsPerToken / 1e6).toPrecision(3))} ms/token`;

/** The waits counted in otherShare, said only once they are a visible part of the time. */
const OTHER_SHARE_SAID = 0.05;

/** Which completed requests a split is over: those so far (live, warm-up included), or the measured window's. */
export type BusyScope = 'so far' | 'in the measured window';

/**
 * Where the workers' time went, in a clause: "the workers spent 96 % of the busy time of the 163
 * requests completed in the measured window in simulated generation (realistic, 30 ms/token) and 4 %
 * in cache I/O", the bound first, its denominator said.
 */
export function busySplitWords(s: BusySplit, scope: BusyScope, generation: GenerationPace | null): string {
  const of = `the busy time of the ${groupedFixed(s.requests, 0)} request${s.requests === 1 ? '' : 's'} completed ${scope}`;
  const gen = { share: s.generationShare, what: `in simulated generation${generation ? ` (${generationPaceText(generation)})` : ''}` };
  const tier = s.cacheIoTier ? ` (${percentText(s.cacheIoTier.share)} of it in the ${TIER_WORDS[s.cacheIoTier.tier]} tier)` : '';
  const io = { share: s.cacheIoShare, what: `in cache I/O${tier}` };
  const other = s.otherShare >= OTHER_SHARE_SAID ? { share: s.otherShare, what: 'between cache operations (waiting for room in a tier, write admission or an entry being written)' } : null;
  const [first, ...rest] = (s.bound === 'generation' ? [gen, io, other] : [io, other, gen]).filter((p) => p !== null);
  const later = rest.map((p) => `${percentText(p.share)} ${p.what}`);
  const tail = later.length === 0 ? '' : later.length === 1 ? ` and ${later[0]}` : `, ${later.slice(0, -1).join(', ')} and ${later.at(-1)}`;
  return `the workers spent ${percentText(first.share)} of ${of} ${first.what}${tail}`;
}

/** Who serves less than the offered load in a cache-bound queue: the storage only when its tier took most of the cache I/O. */
function cacheServer(s: BusySplit): string {
  if (s.cacheIoShare < s.otherShare || s.cacheIoTier === null) return 'the cache';
  return s.cacheIoTier.tier === 'storage' ? 'the storage' : `the cache (its ${TIER_WORDS[s.cacheIoTier.tier]} tier)`;
}

/** The bound of a queue that outgrew its workers, in parts each message composes its own sentences from. */
export interface QueueBoundWords {
  /** What took at least GENERATION_BOUND_SHARE of the busy time, or the cache side's; null: not known (or trace-only mode). */
  bound: BusySplit['bound'] | null;
  /** Who offers more load than whom: "the configuration offers more load than the storage serves". */
  offer: string;
  /** Where the workers' time went (busySplitWords), or why that is not known; null in trace-only mode. */
  split: string | null;
  /** What its end-to-end latency and queue wait do not measure: 'storage', 'the cache', 'the cache or the drive', 'the engine'. */
  notWhat: string;
  /** What keeps the queue short: "fewer users or a longer think time". */
  remedy: string;
}

/**
 * The bound named from the measured split (busySplit): simulated generation when it took at least
 * GENERATION_BOUND_SHARE of the busy time (then neither the cache nor the drive set the queue: the
 * generation time and the user count did); the cache otherwise, the storage only when its tier took
 * most of the cache I/O. In trace-only mode there is no storage: the engine serves. Without a split
 * (no request completed, or an engine that sends none) nothing is blamed, and `unmeasured` says why.
 * `scope` names the split's denominator; `past` words it for a window that has closed.
 */
export function queueBoundWords(
  split: BusySplit | null,
  o: { scope: BusyScope; generation: GenerationPace | null; traceOnly: boolean; past?: boolean; unmeasured?: string },
): QueueBoundWords {
  const offer = (who: string, whom: string, plural = false): string =>
    `${who} ${o.past ? 'offered' : plural ? 'offer' : 'offers'} more load than ${whom} ${o.past ? 'served' : whom === 'the workers' ? 'serve' : 'serves'}`;
  const remedy = 'fewer users or a longer think time';
  if (o.traceOnly) return { bound: null, offer: `${offer('the configuration', 'the engine')} (trace-only mode: no storage I/O)`, split: null, notWhat: 'the engine', remedy };
  if (split === null) {
    const why = o.unmeasured ?? `no request ${o.past ? 'completed in the measured window' : 'has completed yet'}, so what held them is not measured`;
    return { bound: null, offer: offer('the configuration', 'the workers'), split: why, notWhat: 'storage', remedy };
  }
  const words = busySplitWords(split, o.scope, o.generation);
  if (split.bound === 'generation') {
    return {
      bound: 'generation',
      offer: offer('the generation time and the user count', 'the workers', true),
      split: words,
      notWhat: 'the cache or the drive',
      remedy: 'fewer users, a longer think time or a faster generation mode',
    };
  }
  const server = cacheServer(split);
  return { bound: 'cache', offer: offer('the configuration', server), split: words, notWhat: server === 'the storage' ? 'storage' : 'the cache', remedy };
}

/**
 * The offer and the split in one clause, the evidence first when the generation bound the queue:
 * "the workers spent 96 % … in simulated generation …: the generation time and the user count offer
 * more load than the workers serve"; "the configuration offers more load than the storage serves:
 * the workers spent …"; "… than the workers serve (no request has completed yet, …)".
 */
export function queueBoundCause(w: QueueBoundWords): string {
  if (w.split === null) return w.offer;
  if (w.bound === null) return `${w.offer} (${w.split})`;
  return w.bound === 'generation' ? `${w.split}: ${w.offer}` : `${w.offer}: ${w.split}`;
}
