// The fixture of a run stored by kvbench before 0.5.0, made from one stored by today's kvbench (see
// legacy-rates.test.ts and the backend's endpoint tests).
import type { EndpointRequestSample } from '../../../src-shared/domain/endpoint.ts';
import type { Store } from '../../../src-main/store/store.ts';

/**
 * The fixture: a run stored by today's kvbench, rolled back to what kvbench 0.4.0 stored for the same
 * requests — its version, aggregates without spanS, and duration_s and the rates over the span (its
 * runner's first send → last end, every sent request counted, cancelled ones too), in aggregates_json
 * and in the flat metrics. Worked out here from the samples, not by the code under test.
 */
export function rollBackTo040(s: Store, id: number, samples: readonly EndpointRequestSample[]): Record<'duration_s' | 'requests_per_s' | 'output_tokens_per_s' | 'context_tokens_per_s', number> {
  const sent = samples.filter((q) => q.sentOffsetMs !== null);
  const spanS = (Math.max(...sent.map((q) => q.sentOffsetMs! + (q.e2eMs ?? 0))) - Math.min(...sent.map((q) => q.sentOffsetMs!))) / 1000;
  const ok = samples.filter((q) => q.status === 'ok');
  const stored = {
    duration_s: spanS,
    requests_per_s: ok.length / spanS,
    output_tokens_per_s: ok.reduce((a, q) => a + (q.outputTokens ?? 0), 0) / spanS,
    context_tokens_per_s: ok.reduce((a, q) => a + q.contextTokens, 0) / spanS,
  };
  const row = s.db.prepare('SELECT aggregates_json FROM endpoint_runs WHERE id = ?').get(id) as { aggregates_json: string };
  const a = JSON.parse(row.aggregates_json) as Record<string, unknown>;
  delete a.spanS;
  Object.assign(a, { durationS: stored.duration_s, requestsPerS: stored.requests_per_s, outputTokensPerS: stored.output_tokens_per_s, contextTokensPerS: stored.context_tokens_per_s });
  s.db.prepare("UPDATE endpoint_runs SET kvbench_version = '0.4.0', aggregates_json = ? WHERE id = ?").run(JSON.stringify(a), id);
  for (const [k, v] of Object.entries(stored)) s.db.prepare('UPDATE endpoint_run_metrics SET value = ? WHERE run_id = ? AND key = ?').run(v, id, k);
  return stored;
}

