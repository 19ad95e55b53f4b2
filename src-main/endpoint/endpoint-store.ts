// Endpoint runs in the trial store (schema migration 2): one row per run under its system label, with
// its full configuration, aggregates and server metrics as JSON, its flat metrics as rows (for
// listing, comparing and exporting without parsing JSON), and one row per request. A run is written
// once, complete, in one transaction: an interrupted run is stored as `partial` by the command that
// ran it, so there is no `running` state to recover.
import {
  SERVER_METRIC_BY_KEY,
  type EndpointAggregates,
  type EndpointRequestSample,
  type EndpointRunConfig,
  type EndpointRunRecord,
  type EndpointRunStatus,
  type LegacyRates,
  type RequestStatus,
  type ServerCacheMetrics,
  type TokenCountSources,
} from '../../src-shared/domain/endpoint.ts';
import { recordIdsBeforeDelete, takeIds } from '../store/schema-meta.ts';
import type { SqlValue } from '../store/sqlite.ts';
import { StoreError } from '../store/store-error.ts';
import type { Store } from '../store/store.ts';
import { recomputeSpanRates, type RateSample } from './aggregate.ts';
import { endpointRunSummary, type EndpointRunSummary } from './endpoint-compare.ts';
import { legacyRequestsDigest } from './replay-plan.ts';
import type { EndpointRunOutcome } from './runner.ts';

interface RunRow {
  id: number;
  system_label: string;
  status: EndpointRunStatus;
  status_reason: string | null;
  base_url: string;
  model: string;
  api: string;
  workload_file: string | null;
  workload_digest: string;
  notes: string | null;
  config_json: string;
  started_at: string;
  finished_at: string;
  wall_ms: number;
  requests_total: number;
  requests_ok: number;
  aggregates_json: string;
  server_metrics_json: string;
  client_host: string;
  kvbench_version: string;
}

interface RequestRow {
  seq: number;
  request_id: string;
  batch_index: number;
  prompt_id: string;
  reused: number;
  context_tokens: number;
  prompt_chars: number;
  max_tokens: number;
  status: RequestStatus;
  http_status: number | null;
  error: string | null;
  sent_offset_ms: number | null;
  ttft_ms: number | null;
  e2e_ms: number | null;
  tpot_ms: number | null;
  output_tokens: number | null;
  output_chunks: number;
  token_count_source: 'usage' | 'chunks' | null;
  prompt_tokens: number | null;
  cached_prompt_tokens: number | null;
  finish_reason: string | null;
}

export interface EndpointRunFilter {
  labels?: readonly string[];
  statuses?: readonly EndpointRunStatus[];
  limit?: number;
  order?: 'asc' | 'desc';
}

export interface EndpointLabelSummary {
  systemLabel: string;
  runs: number;
  complete: number;
  latestStartedAt: string;
}

const num = (v: number | null): number | null => (v === null || !Number.isFinite(v) ? null : v);

export class EndpointStore {
  readonly store: Store;

  constructor(store: Store) {
    this.store = store;
  }

  /** Stores a finished run, its metrics and every request in one transaction; returns its id. */
  insertRun(o: EndpointRunOutcome): number {
    const db = this.store.db;
    const tx = db.transaction(() => {
      // Never an id a deleted run had (takeIds): a note or export naming "endpoint run 5" keeps meaning that run.
      const id = takeIds(db, 'endpoint_runs');
      db.prepare(
        `INSERT INTO endpoint_runs (id, system_label, status, status_reason, base_url, model, api, workload_file, workload_digest, notes, config_json,
           started_at, finished_at, wall_ms, requests_total, requests_ok, aggregates_json, server_metrics_json, client_host, kvbench_version)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(
        id,
        o.systemLabel,
        o.status,
        o.statusReason,
        o.config.baseUrl,
        o.config.model,
        o.config.api,
        o.config.workloadFile,
        o.config.workloadDigest,
        o.config.notes,
        JSON.stringify(o.config),
        o.startedAt,
        o.finishedAt,
        o.wallMs,
        o.aggregates.requestsTotal,
        o.aggregates.requestsOk,
        JSON.stringify(o.aggregates),
        JSON.stringify(o.serverMetrics),
        o.clientHost,
        o.kvbenchVersion,
      );
      const m = db.prepare('INSERT INTO endpoint_run_metrics (run_id, key, value) VALUES (?, ?, ?)');
      for (const [k, v] of Object.entries(o.metrics)) if (Number.isFinite(v)) m.run(id, k, v);
      const r = db.prepare(
        `INSERT INTO endpoint_requests (run_id, seq, request_id, batch_index, prompt_id, reused, context_tokens, prompt_chars, max_tokens, status, http_status, error,
           sent_offset_ms, ttft_ms, e2e_ms, tpot_ms, output_tokens, output_chunks, token_count_source, prompt_tokens, cached_prompt_tokens, finish_reason)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      );
      for (const s of o.samples) {
        const row: SqlValue[] = [
          id,
          s.seq,
          s.requestId,
          s.batchIndex,
          s.promptId,
          s.reused ? 1 : 0,
          s.contextTokens,
          s.promptChars,
          s.maxTokens,
          s.status,
          s.httpStatus,
          s.error,
          num(s.sentOffsetMs),
          num(s.ttftMs),
          num(s.e2eMs),
          num(s.tpotMs),
          s.outputTokens,
          s.outputChunks,
          s.tokenCountSource,
          s.promptTokens,
          s.cachedPromptTokens,
          s.finishReason,
        ];
        r.run(...row);
      }
      return id;
    });
    return tx.immediate();
  }

  #metricsFor(ids: readonly number[]): Map<number, Record<string, number>> {
    const out = new Map<number, Record<string, number>>();
    for (let i = 0; i < ids.length; i += 500) {
      const chunk = ids.slice(i, i + 500);
      const rows = this.store.db.prepare(`SELECT run_id, key, value FROM endpoint_run_metrics WHERE run_id IN (${chunk.map(() => '?').join(', ')})`).all(...chunk) as {
        run_id: number;
        key: string;
        value: number;
      }[];
      for (const r of rows) {
        let m = out.get(r.run_id);
        if (!m) out.set(r.run_id, (m = {}));
        m[r.key] = r.value;
      }
    }
    return out;
  }

  #tokenCountSources(runId: number): TokenCountSources {
    const t = this.store.db
      .prepare(
        `SELECT SUM(token_count_source = 'usage') AS usage, SUM(token_count_source = 'chunks') AS chunks,
           SUM(token_count_source = 'chunks' AND finish_reason = 'length' AND output_tokens < max_tokens) AS below
         FROM endpoint_requests WHERE run_id = ? AND status = 'ok'`,
      )
      .get(runId) as { usage: number | null; chunks: number | null; below: number | null };
    return { usage: t.usage ?? 0, chunks: t.chunks ?? 0, chunksBelowMaxTokens: t.below ?? 0 };
  }

  /** What of a run's requests its duration and rates are taken from (aggregate.ts runRates). */
  #rateSamples(runId: number): RateSample[] {
    const rows = this.store.db
      .prepare('SELECT batch_index, status, sent_offset_ms, e2e_ms, output_tokens, context_tokens FROM endpoint_requests WHERE run_id = ? ORDER BY seq')
      .all(runId) as Pick<RequestRow, 'batch_index' | 'status' | 'sent_offset_ms' | 'e2e_ms' | 'output_tokens' | 'context_tokens'>[];
    return rows.map((q) => ({ batchIndex: q.batch_index, status: q.status, sentOffsetMs: q.sent_offset_ms, e2eMs: q.e2e_ms, outputTokens: q.output_tokens, contextTokens: q.context_tokens }));
  }

  #toRecord(r: RunRow, metrics: Record<string, number>): EndpointRunRecord {
    const config = JSON.parse(r.config_json) as EndpointRunConfig;
    // Runs stored before the requests digest existed: derived from what they stored (see replay-plan.ts).
    config.requestsDigest ??= legacyRequestsDigest(config);
    const serverMetrics = JSON.parse(r.server_metrics_json) as ServerCacheMetrics;
    // Runs stored before the since-server-start flag: a trtllm-serve JSON counter without a "before"
    // that still has a Δ is exactly the case serverMetricsDelta now flags.
    for (const v of serverMetrics.values) {
      v.sinceServerStart ??= v.source?.startsWith('trtllm-json:') === true && SERVER_METRIC_BY_KEY[v.key]?.kind === 'counter' && v.before === null && v.delta !== null;
    }
    const aggregates = JSON.parse(r.aggregates_json) as EndpointAggregates;
    // Runs stored before the aggregates counted token-count sources: counted from their requests.
    aggregates.tokenCountSources ??= this.#tokenCountSources(r.id);
    // Runs stored before 0.5.0 took duration_s and the rates over the span, pauses included: taken
    // again from their requests as today, in memory (the row stays as it was stored), or kept and
    // marked where the requests cannot reproduce the run.
    let legacyRates: LegacyRates | undefined;
    if (aggregates.spanS === undefined) legacyRates = recomputeSpanRates(aggregates, metrics, this.#rateSamples(r.id), r.kvbench_version);
    return {
      id: r.id,
      systemLabel: r.system_label,
      status: r.status,
      statusReason: r.status_reason,
      config,
      startedAt: r.started_at,
      finishedAt: r.finished_at,
      wallMs: r.wall_ms,
      aggregates,
      serverMetrics,
      metrics,
      kvbenchVersion: r.kvbench_version,
      clientHost: r.client_host,
      ...(legacyRates ? { legacyRates } : {}),
    };
  }

  listRuns(filter: EndpointRunFilter = {}): EndpointRunRecord[] {
    const where: string[] = [];
    const params: SqlValue[] = [];
    if (filter.labels?.length) {
      where.push(`system_label IN (${filter.labels.map(() => '?').join(', ')})`);
      params.push(...filter.labels);
    }
    if (filter.statuses?.length) {
      where.push(`status IN (${filter.statuses.map(() => '?').join(', ')})`);
      params.push(...filter.statuses);
    }
    const order = filter.order === 'asc' ? 'ASC' : 'DESC';
    params.push(filter.limit ?? -1);
    const rows = this.store.db
      .prepare(`SELECT * FROM endpoint_runs ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY started_at ${order}, id ${order} LIMIT ?`)
      .all(...params) as RunRow[];
    const metrics = this.#metricsFor(rows.map((r) => r.id));
    return rows.map((r) => this.#toRecord(r, metrics.get(r.id) ?? {}));
  }

  getRun(id: number): EndpointRunRecord | null {
    const r = this.store.db.prepare('SELECT * FROM endpoint_runs WHERE id = ?').get(id) as RunRow | undefined;
    return r ? this.#toRecord(r, this.#metricsFor([id]).get(id) ?? {}) : null;
  }

  /** A run by id; a StoreError NOT_FOUND otherwise. */
  requireRun(id: number): EndpointRunRecord {
    const r = this.getRun(id);
    if (!r) throw new StoreError('NOT_FOUND', `no endpoint run ${id} (see kvbench endpoint list)`);
    return r;
  }

  requests(runId: number): EndpointRequestSample[] {
    const rows = this.store.db.prepare('SELECT * FROM endpoint_requests WHERE run_id = ? ORDER BY seq').all(runId) as RequestRow[];
    return rows.map((r) => ({
      seq: r.seq,
      requestId: r.request_id,
      batchIndex: r.batch_index,
      promptId: r.prompt_id,
      reused: r.reused === 1,
      contextTokens: r.context_tokens,
      promptChars: r.prompt_chars,
      maxTokens: r.max_tokens,
      status: r.status,
      httpStatus: r.http_status,
      error: r.error,
      sentOffsetMs: r.sent_offset_ms,
      ttftMs: r.ttft_ms,
      e2eMs: r.e2e_ms,
      tpotMs: r.tpot_ms,
      outputTokens: r.output_tokens,
      outputChunks: r.output_chunks,
      tokenCountSource: r.token_count_source,
      promptTokens: r.prompt_tokens,
      cachedPromptTokens: r.cached_prompt_tokens,
      finishReason: r.finish_reason,
    }));
  }

  labels(): EndpointLabelSummary[] {
    const rows = this.store.db
      .prepare(
        `SELECT system_label, COUNT(*) AS runs, SUM(status = 'complete') AS complete, MAX(started_at) AS latest
         FROM endpoint_runs GROUP BY system_label ORDER BY latest DESC`,
      )
      .all() as { system_label: string; runs: number; complete: number; latest: string }[];
    return rows.map((r) => ({ systemLabel: r.system_label, runs: r.runs, complete: r.complete, latestStartedAt: r.latest }));
  }

  deleteRun(id: number): void {
    this.store.atomically(() => {
      // The ids given so far, recorded before one goes (a database from before the record): never given again.
      recordIdsBeforeDelete(this.store.db, 'endpoint_runs');
      const r = this.store.db.prepare('DELETE FROM endpoint_runs WHERE id = ?').run(id);
      if (r.changes === 0) throw new StoreError('NOT_FOUND', `no endpoint run ${id}`);
    });
  }

  /**
   * A label's runs a comparison may use, newest first: complete ones (partial ones too with
   * `includePartial`). Which of them it uses is pickCompareRuns' choice (endpoint-compare.ts).
   */
  compareCandidates(label: string, opts: { includePartial?: boolean } = {}): EndpointRunSummary[] {
    const statuses: EndpointRunStatus[] = opts.includePartial ? ['complete', 'partial'] : ['complete'];
    return this.listRuns({ labels: [label], statuses }).map(endpointRunSummary);
  }
}
