// `kvbench endpoint run --output FILE`: the seed study's accumulating results file
// (benchmark_kv_offload.py --output_json): runs grouped under their system label, so the PCIe and the
// C2C run land in one file. Each entry carries the study's `aggregate` keys (seconds) beside kvbench's
// full record and samples. An existing file of another format is never overwritten.
import fsp from 'node:fs/promises';
import { UNSTORED_RUN_ID, cacheHitRateOf, serverMetricCaveats, serverMetricNotes, type EndpointRunRecord, type EndpointRequestSample } from '../../src-shared/domain/endpoint.ts';
import { outputFileProblem, resolveOutputTarget, writeFileAtomic } from '../util/write-file-atomic.ts';
import { jsonText, printable } from '../../src-shared/domain/label-text.ts';

export const RESULTS_FILE_FORMAT = 'kvbench-endpoint-results';

const s = (ms: number | null | undefined): number | null => (typeof ms === 'number' && Number.isFinite(ms) ? ms / 1000 : null);

export function resultsEntry(r: EndpointRunRecord, samples: readonly EndpointRequestSample[]): Record<string, unknown> {
  const a = r.aggregates;
  const v = (key: string): number | null => r.serverMetrics.values.find((x) => x.key === key)?.delta ?? null;
  // The same rate, from the same source, as the run listings in the CLI and the app.
  const hit = cacheHitRateOf(r.metrics);
  const flagged = serverMetricCaveats(r.serverMetrics);
  // log_metrics key → the flat metric it reports: a value that may not be the run's share says so.
  const from: Record<string, string | null> = {
    cache_hit_rate: hit?.key ?? null,
    reused_blocks: 'server.reused_blocks',
    offloaded_bytes: 'server.offload_bytes',
    reloaded_bytes: 'server.reload_bytes',
    observed_offload_bandwidth_bytes_per_s: 'server.offload_bandwidth',
  };
  const caveats = Object.fromEntries(Object.entries(from).flatMap(([k, m]) => (m !== null && flagged[m] ? [[k, flagged[m]]] : [])));
  return {
    aggregate: {
      throughput_req_per_s: a.requestsPerS,
      output_tokens_per_s: a.outputTokensPerS,
      ttft_p50_s: s(a.ttftMs.p50),
      ttft_p95_s: s(a.ttftMs.p95),
      ttft_p99_s: s(a.ttftMs.p99),
      latency_p50_s: s(a.e2eMs.p50),
      latency_p95_s: s(a.e2eMs.p95),
      latency_p99_s: s(a.e2eMs.p99),
    },
    // What the study read from TensorRT-LLM's logs, here from the server's metrics (null where not served).
    log_metrics: {
      cache_hit_rate: hit?.value ?? null,
      cache_hit_rate_source: hit?.source ?? null,
      reused_blocks: v('reused_blocks'),
      offloaded_bytes: v('offload_bytes'),
      reloaded_bytes: v('reload_bytes'),
      observed_offload_bandwidth_bytes_per_s: r.serverMetrics.derived.offload_bandwidth ?? null,
      // Values above that may not be the run's own share (e.g. trtllm-serve totals since the server started), and the pages' notes.
      caveats,
      server_metrics_notes: serverMetricNotes(r.serverMetrics),
    },
    samples,
    run_meta: { run_id: r.id === UNSTORED_RUN_ID ? null : r.id, status: r.status, status_reason: r.statusReason, started_at: r.startedAt, finished_at: r.finishedAt, config: r.config },
    kvbench: { aggregates: r.aggregates, server_metrics: r.serverMetrics, metrics: r.metrics, kvbench_version: r.kvbenchVersion, client_host: r.clientHost },
  };
}

type ResultsDoc = { format: string; version: number; runs: Record<string, unknown[]> };

const emptyResultsDoc = (): ResultsDoc => ({ format: RESULTS_FILE_FORMAT, version: 1, runs: {} });

/**
 * The file's document, a new one when it is missing or empty; throws for a file of another kind.
 * A pipe, FIFO, terminal or device (`--output /dev/stdout | jq`) is never read: opening one to read
 * would wait for a writer's end that never comes (for /dev/stdout of a pipe, the read end of our own
 * output), and there is no earlier document in it to add to, so this run's document goes into it alone.
 */
async function readResultsFile(file: string): Promise<ResultsDoc> {
  const target = resolveOutputTarget(file);
  if (target.kind !== 'replace') return emptyResultsDoc();
  let text: string | null = null;
  try {
    text = await fsp.readFile(target.path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  if (text === null || text.trim() === '') return emptyResultsDoc();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`${printable(file)} exists and is not JSON: not overwritten (choose another --output)`);
  }
  const p = parsed as { format?: unknown; runs?: unknown };
  if (p.format !== RESULTS_FILE_FORMAT || typeof p.runs !== 'object' || p.runs === null || Array.isArray(p.runs)) {
    throw new Error(`${printable(file)} exists and is not a kvbench endpoint results file: not overwritten (choose another --output)`);
  }
  return parsed as ResultsDoc;
}

/**
 * Checked before a run starts, so that an hour of requests is not lost to an --output that names
 * the workload or some other file: the file must be missing, empty or a results file, in a
 * directory this process can write, or a writable pipe, FIFO, terminal or device.
 */
export async function checkResultsFileTarget(file: string): Promise<void> {
  const problem = outputFileProblem(file);
  if (problem !== null) throw new Error(problem);
  await readResultsFile(file);
}

/** Adds the run under `runs[<label>]` of the file (created if missing). */
export async function appendResultsFile(file: string, r: EndpointRunRecord, samples: readonly EndpointRequestSample[]): Promise<void> {
  await writeFileAtomic(file, withRun(await readResultsFile(file), r, samples));
}

/** A results file holding this one run, as text. */
export function resultsFileText(r: EndpointRunRecord, samples: readonly EndpointRequestSample[]): string {
  return withRun(emptyResultsDoc(), r, samples);
}

function withRun(doc: ResultsDoc, r: EndpointRunRecord, samples: readonly EndpointRequestSample[]): string {
  (doc.runs[r.systemLabel] ??= []).push(resultsEntry(r, samples));
  return `${jsonText(doc, 2)}\n`;
}
