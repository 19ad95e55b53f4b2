// The serving engine's own cache metrics, scraped before and after a run: the run's share of every
// counter (after − before) and the gauges' values at both ends, for the families in
// SERVER_METRICS (src-shared/domain/endpoint.ts).
//
// Two page formats:
//   - Prometheus text (vLLM /metrics, SGLang /metrics, trtllm-serve /prometheus/metrics).
//   - trtllm-serve's JSON iteration statistics on /metrics: an array of per-iteration records whose
//     `kvCacheStats` holds cumulative block counters (reusedBlocks, missedBlocks, allocNewBlocks …).
//     The server drops what it has returned, so the last record before the run is the baseline; an
//     empty array (no iteration since the last read, e.g. a fresh server) means counters since start,
//     which the result says.
import {
  DERIVED_SERVER_METRICS,
  SERVER_METRICS,
  type MetricsPageResult,
  type ServerCacheMetrics,
  type ServerMetricValue,
} from '../../src-shared/domain/endpoint.ts';
import { getPage } from './http-get.ts';
import { counterValue, familySamples, gaugeValue, parsePrometheusText, seriesKey, type PromPage } from './prometheus-text.ts';

/** Families of these prefixes go into `rawCounterDeltas`. */
const ENGINE_PREFIXES: readonly { prefix: string; engine: string }[] = [
  { prefix: 'vllm:', engine: 'vllm' },
  { prefix: 'sglang:', engine: 'sglang' },
  { prefix: 'sglang_', engine: 'sglang' },
  { prefix: 'trtllm_', engine: 'trtllm' },
  { prefix: 'lmcache:', engine: 'lmcache' },
  { prefix: 'lmcache_', engine: 'lmcache' },
];
const MAX_RAW_SERIES = 2000;
const MAX_PAGE_BYTES = 32 * 1024 * 1024;

export interface TrtllmKvCacheStats {
  [field: string]: number;
}

export type PageSnapshot =
  | { url: string; format: 'prometheus'; page: PromPage }
  | { url: string; format: 'trtllm-iteration-json'; /** The last iteration's kvCacheStats; null when the array was empty. */ kv: TrtllmKvCacheStats | null; iterations: number }
  | { url: string; format: 'unavailable'; error: string };

/** The default pages for a server: `<root>/metrics` and trtllm-serve's `<root>/prometheus/metrics`. */
export function defaultMetricsUrls(baseUrl: string): string[] {
  const root = baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '');
  return [`${root}/metrics`, `${root}/prometheus/metrics`];
}

/** Recognises a page by its content: a JSON array/object is trtllm-serve's statistics, anything else Prometheus text. */
export function parseMetricsPage(url: string, body: string): PageSnapshot {
  const t = body.trimStart();
  if (t.startsWith('[') || t.startsWith('{')) {
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch (err) {
      return { url, format: 'unavailable', error: `the page looks like JSON but does not parse: ${(err as Error).message}` };
    }
    const list = Array.isArray(json) ? json : [json];
    let kv: TrtllmKvCacheStats | null = null;
    for (const it of list) {
      const s = (it as { kvCacheStats?: unknown } | null)?.kvCacheStats;
      if (s && typeof s === 'object') {
        const nums: TrtllmKvCacheStats = {};
        for (const [k, v] of Object.entries(s as Record<string, unknown>)) if (typeof v === 'number' && Number.isFinite(v)) nums[k] = v;
        if (typeof nums.usedNumBlocks === 'number' && typeof nums.maxNumBlocks === 'number' && nums.maxNumBlocks > 0) nums.usage = nums.usedNumBlocks / nums.maxNumBlocks;
        kv = nums;
      }
    }
    if (list.length > 0 && kv === null && !list.some((x) => x && typeof x === 'object' && 'iter' in x)) {
      return { url, format: 'unavailable', error: 'a JSON page without TensorRT-LLM iteration statistics (no kvCacheStats)' };
    }
    return { url, format: 'trtllm-iteration-json', kv, iterations: list.length };
  }
  const page = parsePrometheusText(body);
  if (page.samples.length === 0) return { url, format: 'unavailable', error: page.errors.length > 0 ? `not Prometheus text (line ${page.errors[0].line}: ${page.errors[0].message})` : 'an empty metrics page' };
  return { url, format: 'prometheus', page };
}

/** GETs one metrics page (bounded in time and size). Never throws: a failure is an `unavailable` snapshot. */
export async function scrapeMetricsPage(
  url: string,
  opts: { timeoutMs: number; headers?: Record<string, string>; signal?: AbortSignal; maxBytes?: number },
): Promise<PageSnapshot> {
  const maxBytes = opts.maxBytes ?? MAX_PAGE_BYTES;
  const got = await getPage(url, {
    headers: { Accept: 'text/plain, application/openmetrics-text;q=0.5, application/json;q=0.3', ...opts.headers },
    timeoutMs: opts.timeoutMs,
    maxBytes,
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
  switch (got.kind) {
    case 'page':
      return parseMetricsPage(url, got.body);
    case 'status':
      return { url, format: 'unavailable', error: `HTTP ${got.status} ${got.statusText}`.trim() };
    case 'too-long':
      return { url, format: 'unavailable', error: got.declaredBytes !== null ? `the page is ${got.declaredBytes} bytes (more than ${maxBytes})` : `the page is more than ${maxBytes} bytes (read no further)` };
    case 'failed':
      return { url, format: 'unavailable', error: got.error };
  }
}

/** The engines whose metric families a page serves (trtllm for TensorRT-LLM's JSON statistics). */
export function enginesOf(s: PageSnapshot): string[] {
  if (s.format === 'trtllm-iteration-json') return ['trtllm'];
  if (s.format !== 'prometheus') return [];
  const found = new Set<string>();
  for (const x of s.page.samples) for (const p of ENGINE_PREFIXES) if (x.name.startsWith(p.prefix)) found.add(p.engine);
  return [...found].sort();
}

/** A gauge, or a field of trtllm-serve's JSON statistics (one cumulative number, counters included). */
function readSource(snap: PageSnapshot | undefined, name: string, labels: Record<string, string> | undefined): number | null {
  if (!snap) return null;
  if (name.startsWith('trtllm-json:')) {
    if (snap.format !== 'trtllm-iteration-json' || snap.kv === null) return null;
    const v = snap.kv[name.slice('trtllm-json:'.length)];
    return typeof v === 'number' ? v : null;
  }
  return snap.format === 'prometheus' ? gaugeValue(snap.page, name, labels) : null;
}

/**
 * The server process restarted between the scrapes when a `process_start_time_seconds` series (the
 * standard Prometheus client's; one per process) changed. Null when it did not, or is not served.
 */
function restartBetween(b: PageSnapshot | undefined, a: PageSnapshot | undefined): { fromS: number; toS: number } | null {
  if (b?.format !== 'prometheus' || a?.format !== 'prometheus') return null;
  const before = new Map(familySamples(b.page, 'process_start_time_seconds').map((x) => [seriesKey(x), x.value]));
  for (const x of familySamples(a.page, 'process_start_time_seconds')) {
    const was = before.get(seriesKey(x));
    if (was !== undefined && was !== x.value) return { fromS: was, toS: x.value };
  }
  return null;
}

/**
 * One counter series over the run: now − prev, or now (counting from zero, flagged as a reset) when
 * the series went backwards or the server restarted between the scrapes.
 */
function seriesDelta(prev: number, now: number, restarted: boolean): { delta: number; reset: boolean } {
  const was = restarted ? 0 : prev;
  return now >= was ? { delta: now - was, reset: restarted } : { delta: now, reset: true };
}

type CounterReading = Pick<ServerMetricValue, 'before' | 'after' | 'delta' | 'reset'>;

/**
 * A Prometheus counter family over the run, series by series (one per engine, rank, label set): each
 * series' after − before, a series that went backwards counting from zero (its after value) and
 * flagged, then summed — so one restarted rank neither hides the others' work nor is hidden by it.
 * A series first seen after the run started at 0. After a server restart every series counts from
 * zero. Null when neither page serves the family.
 */
function promCounter(b: PromPage | undefined, a: PromPage | undefined, name: string, labels: Record<string, string> | undefined, restarted: boolean): CounterReading | null {
  const finite = (p: PromPage | undefined) => (p ? familySamples(p, name, labels).filter((x) => Number.isFinite(x.value)) : []);
  const sb = finite(b);
  const sa = finite(a);
  if (sb.length === 0 && sa.length === 0) return null;
  const reading: CounterReading = { before: b ? counterValue(b, name, labels) : null, after: a ? counterValue(a, name, labels) : null, delta: null, reset: restarted };
  if (b === undefined || sa.length === 0) return reading;
  const prev = new Map(sb.map((x) => [seriesKey(x), x.value]));
  let delta = 0;
  for (const x of sa) {
    const d = seriesDelta(prev.get(seriesKey(x)) ?? 0, x.value, restarted);
    delta += d.delta;
    if (d.reset) reading.reset = true;
  }
  reading.delta = delta;
  return reading;
}

function isCounterSeries(page: PromPage, name: string): boolean {
  if (name.endsWith('_bucket') || name.endsWith('_created')) return false;
  if (name.endsWith('_sum') || name.endsWith('_count')) return true;
  const base = name.endsWith('_total') ? name.slice(0, -6) : name;
  const type = page.types.get(base) ?? page.types.get(name);
  return type === 'counter' || (type === undefined && name.endsWith('_total'));
}

/**
 * The run's server metrics from the snapshots taken before and after it (the same URLs, in the same
 * order). A page only seen before or after contributes what it can, and says so.
 */
export function serverMetricsDelta(before: readonly PageSnapshot[], after: readonly PageSnapshot[]): ServerCacheMetrics {
  const urls = [...new Set([...before.map((s) => s.url), ...after.map((s) => s.url)])];
  const pages: MetricsPageResult[] = [];
  const pairs: { b: PageSnapshot | undefined; a: PageSnapshot | undefined; restarted: boolean; notes: string[] }[] = [];
  for (const url of urls) {
    const b = before.find((s) => s.url === url);
    const a = after.find((s) => s.url === url);
    const notes: string[] = [];
    const usable = (s: PageSnapshot | undefined): boolean => s !== undefined && s.format !== 'unavailable';
    const fmt = usable(a) ? a!.format : usable(b) ? b!.format : 'unavailable';
    const error = !usable(a) && !usable(b) ? ((a ?? b) as { error?: string } | undefined)?.error ?? 'not scraped' : null;
    if (usable(b) && !usable(a)) notes.push(`the page could not be read after the run (${(a as { error?: string } | undefined)?.error ?? 'not scraped'}): no deltas`);
    if (!usable(b) && usable(a)) {
      notes.push(
        `the page could not be read before the run (${(b as { error?: string } | undefined)?.error ?? 'not scraped'}): no deltas, so no counter or rate covers the run; the counters' values after it (the server's totals) are kept as "after"`,
      );
    }
    if (b?.format === 'trtllm-iteration-json' && b.kv === null && usable(a)) {
      notes.push('trtllm-serve returned no iteration statistics before the run (none since the last read): block counters are totals since the server started — restart the server before each run for exact deltas');
    }
    if (a?.format === 'trtllm-iteration-json' && a.kv === null) notes.push('trtllm-serve returned no iteration statistics after the run (enable_iter_perf_stats off?)');
    const restart = restartBetween(b, a);
    if (restart) {
      notes.push(
        `the server restarted during the run (process_start_time_seconds ${restart.fromS} → ${restart.toS}): counters count only since the restart, flagged as resets`,
      );
    }
    pages.push({ url, format: fmt, engines: [...new Set([...(b ? enginesOf(b) : []), ...(a ? enginesOf(a) : [])])].sort(), error, notes });
    if (fmt !== 'unavailable') pairs.push({ b: usable(b) ? b : undefined, a: usable(a) ? a : undefined, restarted: restart !== null, notes });
  }

  const values: ServerMetricValue[] = [];
  for (const def of SERVER_METRICS) {
    let chosen: ServerMetricValue | null = null;
    search: for (const src of def.sources) {
      for (const { b, a, restarted } of pairs) {
        const source = src.labels ? `${src.name}{${Object.entries(src.labels).map(([k, v]) => `${k}="${v}"`).join(',')}}` : src.name;
        if (def.kind === 'counter' && !src.name.startsWith('trtllm-json:')) {
          const page = (s: PageSnapshot | undefined): PromPage | undefined => (s?.format === 'prometheus' ? s.page : undefined);
          const r = promCounter(page(b), page(a), src.name, src.labels, restarted);
          if (r === null) continue;
          chosen = { key: def.key, source, ...r, sinceServerStart: false };
          break search;
        }
        const vb = readSource(b, src.name, src.labels);
        const va = readSource(a, src.name, src.labels);
        if (vb === null && va === null) continue;
        if (def.kind === 'gauge') {
          chosen = { key: def.key, source, before: vb, after: va, delta: null, reset: false, sinceServerStart: false };
        } else {
          // trtllm-serve's block counters: an empty queue before the run (a fresh server, or the previous
          // run's "after" read took every record) leaves no baseline. Counting from 0 gives the server's
          // total since it started, which is the run's share only on a fresh server: flagged.
          const sinceServerStart = vb === null && b !== undefined;
          const base = vb ?? (sinceServerStart ? 0 : null);
          let delta: number | null = null;
          let reset = false;
          if (va !== null && base !== null) {
            delta = va - base;
            if (delta < 0) {
              reset = true;
              delta = va;
            }
          }
          chosen = { key: def.key, source, before: vb, after: va, delta, reset, sinceServerStart: sinceServerStart && delta !== null };
        }
        break search;
      }
    }
    if (chosen) values.push(chosen);
  }

  const byKey = new Map(values.map((v) => [v.key, v]));
  const derived: Record<string, number | null> = {};
  for (const d of DERIVED_SERVER_METRICS) {
    const num = byKey.get(d.numerator)?.delta ?? null;
    const parts = d.denominator.map((k) => byKey.get(k)?.delta ?? null);
    if (num === null || parts.some((p) => p === null)) continue;
    const den = (parts as number[]).reduce((x, y) => x + y, 0);
    derived[d.key] = den > 0 ? num / den : null;
  }

  const rawCounterDeltas: Record<string, number> = {};
  let rawCount = 0;
  for (const { b, a, restarted } of pairs) {
    if (a?.format !== 'prometheus') continue;
    const beforeMap = new Map<string, number>();
    if (b?.format === 'prometheus') for (const s of b.page.samples) beforeMap.set(seriesKey(s), s.value);
    for (const s of a.page.samples) {
      if (rawCount >= MAX_RAW_SERIES) break;
      if (!ENGINE_PREFIXES.some((p) => s.name.startsWith(p.prefix)) || !isCounterSeries(a.page, s.name) || !Number.isFinite(s.value)) continue;
      const key = seriesKey(s);
      const prev = b?.format === 'prometheus' ? (beforeMap.get(key) ?? 0) : null;
      if (prev === null) continue;
      const d = seriesDelta(prev, s.value, restarted).delta;
      if (d === 0 || key in rawCounterDeltas) continue;
      rawCounterDeltas[key] = d;
      rawCount++;
    }
  }
  return { pages, values, derived, rawCounterDeltas };
}

/** Scrapes every URL (in parallel); pages that fail are `unavailable` snapshots. */
export async function scrapeAll(urls: readonly string[], opts: { timeoutMs: number; headers?: Record<string, string>; signal?: AbortSignal }): Promise<PageSnapshot[]> {
  return Promise.all(urls.map((u) => scrapeMetricsPage(u, opts)));
}
