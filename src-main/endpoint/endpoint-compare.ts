// Two system labels side by side: which stored runs each side uses, and the comparison of their
// metrics. One function for `kvbench endpoint compare` and the app's `endpoint.compare` channel, so
// the CLI and the view always pick the same runs and say the same thing when one side has none.
import { compareEndpointRuns, type EndpointComparison, type EndpointRunSummary } from '../../src-shared/domain/endpoint.ts';
import { StoreError } from '../store/store-error.ts';
import { toSummary, type EndpointStore } from './endpoint-store.ts';

export interface CompareLabelsOptions {
  /** Partial runs count too (their failed requests are not in their latencies). */
  includePartial?: boolean;
  /** Only the newest run of each label. */
  latestOnly?: boolean;
  /** Exactly these runs for A (or B), instead of choosing by label. */
  runIdsA?: readonly number[];
  runIdsB?: readonly number[];
}

/**
 * Per label, every complete run (partial ones too with `includePartial`) that replayed the same
 * workload as the label's newest; B prefers runs of A's workload, so both sides replayed the same
 * requests where the store has such runs. A side without runs is a StoreError NOT_FOUND that names
 * the labels the store does have.
 */
export function compareLabels(s: EndpointStore, labelA: string, labelB: string, opts: CompareLabelsOptions = {}): EndpointComparison {
  const pick = (label: string, ids: readonly number[] | undefined, digest?: string): EndpointRunSummary[] => {
    if (ids) return ids.map((id) => toSummary(s.requireRun(id)));
    const o = { includePartial: opts.includePartial ?? false, latestOnly: opts.latestOnly ?? false };
    if (digest) {
      const same = s.runsForCompare(label, { ...o, workloadDigest: digest });
      if (same.length > 0) return same;
    }
    return s.runsForCompare(label, o);
  };
  const A = pick(labelA, opts.runIdsA);
  const B = pick(labelB, opts.runIdsB, A[0]?.workloadDigest);
  if (A.length === 0 || B.length === 0) {
    const known = s.labels().map((l) => `${l.systemLabel} (${l.complete}/${l.runs} complete)`);
    const missing = [A.length === 0 ? labelA : null, B.length === 0 ? labelB : null].filter(Boolean).join(' and ');
    throw new StoreError('NOT_FOUND', `no ${opts.includePartial ? 'complete or partial' : 'complete'} runs for ${missing}${known.length ? `; stored labels: ${known.join(', ')}` : ''}`);
  }
  return compareEndpointRuns(labelA, A, labelB, B);
}
