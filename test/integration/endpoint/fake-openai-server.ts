// A small serving engine stand-in for the endpoint benchmark's tests: it speaks the OpenAI streaming
// protocol on 127.0.0.1 (POST /v1/completions and /v1/chat/completions with SSE, GET /v1/models),
// models a prefix cache with a GPU tier and a host offload tier (LRU blocks of `blockTokens` words),
// delays the first token by the prefill it has to do and every next token by a decode step, serves
// its counters on /metrics in vLLM's, SGLang's or TensorRT-LLM's format, and fails on request in
// the ways real servers do. It records what it did per request, so tests check kvbench's
// measurements against the server's own account. Not a test file itself.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type Flavor = 'vllm' | 'sglang' | 'trtllm' | 'none';

export type Failure =
  | { kind: 'http'; status: number; message: string }
  /** Headers sent, then nothing more: at once, or after `afterTokens` tokens (a hung engine). */
  | { kind: 'stall'; afterTokens?: number }
  /** After `afterTokens` tokens, a last chunk whose finish_reason says the server gave up (vLLM "abort"). */
  | { kind: 'finish-abort'; afterTokens: number }
  /** After `afterTokens` tokens, a data line that is not JSON. */
  | { kind: 'malformed'; afterTokens: number }
  /** After `afterTokens` tokens, the socket is destroyed. */
  | { kind: 'disconnect'; afterTokens: number }
  /** After `afterTokens` tokens, an `error` chunk (vLLM's mid-stream failure), then [DONE]. */
  | { kind: 'error-chunk'; afterTokens: number }
  /** The stream ends cleanly but without a finish reason or [DONE]. */
  | { kind: 'no-done' }
  /** Every token, the finish reason and the usage chunk, then silence: no [DONE], the connection held open. */
  | { kind: 'stall-after-finish' };

export interface FakeServerOptions {
  flavor?: Flavor;
  model?: string;
  blockTokens?: number;
  /** GPU tier capacity in blocks (LRU); evicted blocks move to the host tier. */
  gpuBlocks?: number;
  /** Host (offload) tier capacity in blocks (LRU); 0 = no offload tier. */
  hostBlocks?: number;
  bytesPerBlock?: number;
  /** TTFT = baseMs + computed tokens × prefillMsPerToken + reloaded tokens × reloadMsPerToken. */
  baseMs?: number;
  prefillMsPerToken?: number;
  reloadMsPerToken?: number;
  decodeMsPerToken?: number;
  /** Tokens per content chunk (real servers sometimes send several). */
  tokensPerChunk?: number;
  /** Whether a usage chunk is sent when the request asks for it. */
  supportsUsage?: boolean;
  /** Decides per request (0-based arrival order) whether and how it fails. */
  failure?: (index: number, body: Record<string, unknown>) => Failure | null;
  /** Require this bearer token. */
  apiKey?: string;
  /** Listed as the model's `max_model_len` on /v1/models (vLLM does); absent when not set. */
  maxModelLen?: number;
  /** Listen on this port (default: any free one); the start fails when it is taken. */
  port?: number;
}

export interface ServedRequest {
  index: number;
  path: string;
  body: Record<string, unknown>;
  promptText: string;
  promptTokens: number;
  /** Tokens found in the GPU tier (prefix) and in the host tier (reloaded). */
  gpuHitTokens: number;
  hostHitTokens: number;
  computedTokens: number;
  completionTokens: number;
  receivedAtMs: number;
  firstTokenAtMs: number | null;
  endAtMs: number | null;
  /** The server-side first-token delay it applied. */
  ttftDelayMs: number;
  failure: Failure | null;
}

export interface FakeCounters {
  prefixQueries: number;
  prefixHits: number;
  externalQueries: number;
  externalHits: number;
  promptTokens: number;
  generationTokens: number;
  offloadBytes: number;
  reloadBytes: number;
  offloadTimeS: number;
  reloadTimeS: number;
  reusedBlocks: number;
  missedBlocks: number;
  allocNewBlocks: number;
  requestsDone: number;
}

export interface FakeServer {
  url: string;
  port: number;
  requests: ServedRequest[];
  counters: FakeCounters;
  metricsScrapes: number;
  /** TensorRT-LLM flavor: iteration records waiting in the JSON statistics queue (a GET /metrics takes them all). */
  readonly iterationsQueued: number;
  close(): Promise<void>;
}

/** An LRU set of block keys with a capacity. */
class Lru {
  readonly #cap: number;
  readonly #m = new Map<string, true>();
  constructor(cap: number) {
    this.#cap = cap;
  }
  has(k: string): boolean {
    return this.#m.has(k);
  }
  touch(k: string): void {
    this.#m.delete(k);
    this.#m.set(k, true);
  }
  delete(k: string): void {
    this.#m.delete(k);
  }
  /** Inserts; returns the evicted keys. */
  add(k: string): string[] {
    this.touch(k);
    const out: string[] = [];
    while (this.#m.size > this.#cap) {
      const first = this.#m.keys().next().value as string;
      this.#m.delete(first);
      out.push(first);
    }
    return out;
  }
  get size(): number {
    return this.#m.size;
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function promptOf(body: Record<string, unknown>): string {
  if (typeof body.prompt === 'string') return body.prompt;
  const msgs = body.messages as { content?: unknown }[] | undefined;
  return (msgs ?? []).map((m) => (typeof m.content === 'string' ? m.content : '')).join('\n');
}

export async function startFakeServer(opts: FakeServerOptions = {}): Promise<FakeServer> {
  const o = {
    flavor: opts.flavor ?? 'vllm',
    model: opts.model ?? 'fake-model',
    blockTokens: opts.blockTokens ?? 16,
    gpuBlocks: opts.gpuBlocks ?? 1_000_000,
    hostBlocks: opts.hostBlocks ?? 0,
    bytesPerBlock: opts.bytesPerBlock ?? 1024,
    baseMs: opts.baseMs ?? 2,
    prefillMsPerToken: opts.prefillMsPerToken ?? 0,
    reloadMsPerToken: opts.reloadMsPerToken ?? 0,
    decodeMsPerToken: opts.decodeMsPerToken ?? 0,
    tokensPerChunk: opts.tokensPerChunk ?? 1,
    supportsUsage: opts.supportsUsage ?? true,
  };
  const gpu = new Lru(o.gpuBlocks);
  const host = new Lru(Math.max(0, o.hostBlocks));
  const counters: FakeCounters = {
    prefixQueries: 0,
    prefixHits: 0,
    externalQueries: 0,
    externalHits: 0,
    promptTokens: 0,
    generationTokens: 0,
    offloadBytes: 0,
    reloadBytes: 0,
    offloadTimeS: 0,
    reloadTimeS: 0,
    reusedBlocks: 0,
    missedBlocks: 0,
    allocNewBlocks: 0,
    requestsDone: 0,
  };
  const requests: ServedRequest[] = [];
  /** trtllm-serve's iteration statistics queue: drained by each GET /metrics. */
  let iterQueue: Record<string, unknown>[] = [];
  let iter = 0;
  const server: FakeServer = {
    url: '',
    port: 0,
    requests,
    counters,
    metricsScrapes: 0,
    get iterationsQueued() {
      return iterQueue.length;
    },
    close: async () => undefined,
  };

  const insertGpu = (k: string): void => {
    for (const ev of gpu.add(k)) {
      if (o.hostBlocks > 0) {
        host.add(ev);
        counters.offloadBytes += o.bytesPerBlock;
        counters.offloadTimeS += 0.001;
      }
    }
  };

  /** The prefix cache: which of the prompt's full blocks are where; then they are all in the GPU tier. */
  const lookup = (tokens: string[]): { gpuHit: number; hostHit: number } => {
    const nBlocks = Math.floor(tokens.length / o.blockTokens);
    let key = '';
    let gpuHit = 0;
    let hostHit = 0;
    let inPrefix = true;
    const keys: string[] = [];
    for (let b = 0; b < nBlocks; b++) {
      key = `${key}|${tokens.slice(b * o.blockTokens, (b + 1) * o.blockTokens).join(' ')}`;
      keys.push(key);
    }
    for (const k of keys) {
      if (inPrefix && gpu.has(k)) {
        gpuHit += o.blockTokens;
        gpu.touch(k);
        continue;
      }
      if (inPrefix && host.has(k)) {
        hostHit += o.blockTokens;
        host.delete(k);
        counters.reloadBytes += o.bytesPerBlock;
        counters.reloadTimeS += 0.001;
        insertGpu(k);
        continue;
      }
      inPrefix = false;
      counters.allocNewBlocks++;
      insertGpu(k);
    }
    counters.reusedBlocks += (gpuHit + hostHit) / o.blockTokens;
    counters.missedBlocks += nBlocks - (gpuHit + hostHit) / o.blockTokens;
    return { gpuHit, hostHit };
  };

  const metricsText = (): string => {
    const c = counters;
    const lbl = `engine="0",model_name="${o.model}"`;
    if (o.flavor === 'vllm') {
      return [
        '# HELP vllm:prefix_cache_queries Prefix cache queries, in terms of number of queried tokens.',
        '# TYPE vllm:prefix_cache_queries counter',
        `vllm:prefix_cache_queries_total{${lbl}} ${c.prefixQueries}.0`,
        '# HELP vllm:prefix_cache_hits Prefix cache hits, in terms of number of cached tokens.',
        '# TYPE vllm:prefix_cache_hits counter',
        `vllm:prefix_cache_hits_total{${lbl}} ${c.prefixHits}.0`,
        '# TYPE vllm:external_prefix_cache_queries counter',
        `vllm:external_prefix_cache_queries_total{${lbl}} ${c.externalQueries}.0`,
        '# TYPE vllm:external_prefix_cache_hits counter',
        `vllm:external_prefix_cache_hits_total{${lbl}} ${c.externalHits}.0`,
        '# TYPE vllm:kv_offload_store_bytes counter',
        `vllm:kv_offload_store_bytes_total{${lbl}} ${c.offloadBytes}.0`,
        '# TYPE vllm:kv_offload_load_bytes counter',
        `vllm:kv_offload_load_bytes_total{${lbl}} ${c.reloadBytes}.0`,
        '# TYPE vllm:kv_offload_store_time counter',
        `vllm:kv_offload_store_time_total{${lbl}} ${c.offloadTimeS}`,
        '# TYPE vllm:kv_offload_load_time counter',
        `vllm:kv_offload_load_time_total{${lbl}} ${c.reloadTimeS}`,
        '# TYPE vllm:num_preemptions counter',
        `vllm:num_preemptions_total{${lbl}} 0.0`,
        '# TYPE vllm:prompt_tokens counter',
        `vllm:prompt_tokens_total{${lbl}} ${c.promptTokens}.0`,
        '# TYPE vllm:generation_tokens counter',
        `vllm:generation_tokens_total{${lbl}} ${c.generationTokens}.0`,
        '# TYPE vllm:kv_cache_usage_perc gauge',
        `vllm:kv_cache_usage_perc{${lbl}} ${Math.min(1, gpu.size / o.gpuBlocks)}`,
        '# HELP vllm:time_to_first_token_seconds Histogram of time to first token in seconds.',
        '# TYPE vllm:time_to_first_token_seconds histogram',
        `vllm:time_to_first_token_seconds_bucket{le="0.1",${lbl}} ${c.requestsDone}.0`,
        `vllm:time_to_first_token_seconds_bucket{le="+Inf",${lbl}} ${c.requestsDone}.0`,
        `vllm:time_to_first_token_seconds_count{${lbl}} ${c.requestsDone}.0`,
        `vllm:time_to_first_token_seconds_sum{${lbl}} 0.5`,
        '# TYPE vllm:time_to_first_token_seconds_created gauge',
        `vllm:time_to_first_token_seconds_created{${lbl}} 1.7e9`,
        '',
      ].join('\n');
    }
    if (o.flavor === 'sglang') {
      const rate = c.prefixQueries > 0 ? c.prefixHits / c.prefixQueries : 0;
      return [
        '# HELP sglang:prompt_tokens_total Number of prefill tokens processed.',
        '# TYPE sglang:prompt_tokens_total counter',
        `sglang:prompt_tokens_total{model_name="${o.model}"} ${c.promptTokens}`,
        '# TYPE sglang:generation_tokens_total counter',
        `sglang:generation_tokens_total{model_name="${o.model}"} ${c.generationTokens}`,
        '# TYPE sglang:cached_tokens_total counter',
        `sglang:cached_tokens_total{model_name="${o.model}",cache_source="device"} ${c.prefixHits}`,
        `sglang:cached_tokens_total{model_name="${o.model}",cache_source="host"} ${c.externalHits}`,
        '# TYPE sglang:cache_hit_rate gauge',
        `sglang:cache_hit_rate{model_name="${o.model}"} ${rate}`,
        '# TYPE sglang:token_usage gauge',
        `sglang:token_usage{model_name="${o.model}"} 0.25`,
        '',
      ].join('\n');
    }
    return '';
  };

  const trtllmPrometheus = (): string => {
    const c = counters;
    const lbl = `model_name="${o.model}",engine_type="trtllm"`;
    return [
      '# TYPE trtllm_kv_cache_reused_blocks counter',
      `trtllm_kv_cache_reused_blocks_total{${lbl}} ${c.reusedBlocks}.0`,
      '# TYPE trtllm_kv_cache_missed_blocks counter',
      `trtllm_kv_cache_missed_blocks_total{${lbl}} ${c.missedBlocks}.0`,
      '# TYPE trtllm_kv_cache_offload_bytes counter',
      `trtllm_kv_cache_offload_bytes_total{${lbl}} ${c.offloadBytes}.0`,
      '# TYPE trtllm_kv_cache_onboard_bytes counter',
      `trtllm_kv_cache_onboard_bytes_total{${lbl}} ${c.reloadBytes}.0`,
      '# TYPE trtllm_kv_cache_hit_rate gauge',
      `trtllm_kv_cache_hit_rate{${lbl}} ${c.reusedBlocks + c.missedBlocks > 0 ? c.reusedBlocks / (c.reusedBlocks + c.missedBlocks) : 0}`,
      '# TYPE trtllm_prompt_tokens counter',
      `trtllm_prompt_tokens_total{${lbl}} ${c.promptTokens}.0`,
      '',
    ].join('\n');
  };

  const pushIteration = (): void => {
    if (o.flavor !== 'trtllm') return;
    const c = counters;
    iter++;
    iterQueue.push({
      iter,
      iterLatencyMS: 1.5,
      numActiveRequests: 0,
      kvCacheStats: {
        allocNewBlocks: c.allocNewBlocks,
        allocTotalBlocks: c.allocNewBlocks + c.reusedBlocks,
        cacheHitRate: c.reusedBlocks + c.missedBlocks > 0 ? c.reusedBlocks / (c.reusedBlocks + c.missedBlocks) : 0,
        freeNumBlocks: o.gpuBlocks - gpu.size,
        maxNumBlocks: o.gpuBlocks,
        missedBlocks: c.missedBlocks,
        reusedBlocks: c.reusedBlocks,
        tokensPerBlock: o.blockTokens,
        usedNumBlocks: gpu.size,
      },
    });
    if (iterQueue.length > 1000) iterQueue = iterQueue.slice(-1000);
  };

  const handleCompletion = async (req: http.IncomingMessage, res: http.ServerResponse, path: string, body: Record<string, unknown>): Promise<void> => {
    const index = requests.length;
    const receivedAtMs = performance.now();
    const text = promptOf(body);
    const tokens = text.split(/\s+/).filter(Boolean);
    const failure = opts.failure?.(index, body) ?? null;
    const rec: ServedRequest = {
      index,
      path,
      body,
      promptText: text,
      promptTokens: tokens.length,
      gpuHitTokens: 0,
      hostHitTokens: 0,
      computedTokens: 0,
      completionTokens: 0,
      receivedAtMs,
      firstTokenAtMs: null,
      endAtMs: null,
      ttftDelayMs: 0,
      failure,
    };
    requests.push(rec);
    if (failure?.kind === 'http') {
      res.writeHead(failure.status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ error: { message: failure.message, type: 'BadRequestError', code: failure.status } }));
      return;
    }
    if (body.model !== o.model) {
      res.writeHead(404, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `The model \`${String(body.model)}\` does not exist.` } }));
      return;
    }
    const { gpuHit, hostHit } = lookup(tokens);
    rec.gpuHitTokens = gpuHit;
    rec.hostHitTokens = hostHit;
    rec.computedTokens = tokens.length - gpuHit - hostHit;
    counters.prefixQueries += tokens.length;
    counters.prefixHits += gpuHit;
    if (o.hostBlocks > 0) {
      counters.externalQueries += tokens.length - gpuHit;
      counters.externalHits += hostHit;
    }
    counters.promptTokens += tokens.length;
    const maxTokens = typeof body.max_tokens === 'number' ? body.max_tokens : 16;
    const chat = path.endsWith('/chat/completions');
    const wantUsage = o.supportsUsage && (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
    res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache', Connection: 'keep-alive' });
    if (failure?.kind === 'stall' && failure.afterTokens === undefined) {
      // Headers, then silence until the client gives up.
      res.flushHeaders();
      req.socket.on('close', () => res.destroy());
      return;
    }
    const id = `cmpl-${index}`;
    const chunk = (textPiece: string, finish: string | null): string => {
      const choice = chat ? { index: 0, delta: { content: textPiece }, finish_reason: finish } : { index: 0, text: textPiece, finish_reason: finish };
      return `data: ${JSON.stringify({ id, object: chat ? 'chat.completion.chunk' : 'text_completion', created: 0, model: o.model, choices: [choice] })}\n\n`;
    };
    if (chat) res.write(`data: ${JSON.stringify({ id, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] })}\n\n`);
    rec.ttftDelayMs = o.baseMs + rec.computedTokens * o.prefillMsPerToken + hostHit * o.reloadMsPerToken;
    await sleep(rec.ttftDelayMs);
    let sent = 0;
    while (sent < maxTokens) {
      if (res.destroyed) return;
      if (failure && 'afterTokens' in failure && failure.afterTokens !== undefined && sent >= failure.afterTokens) {
        if (failure.kind === 'stall') {
          req.socket.on('close', () => res.destroy());
          return;
        }
        if (failure.kind === 'finish-abort') {
          res.write(chunk('', 'abort'));
          res.write('data: [DONE]\n\n');
          res.end();
        } else if (failure.kind === 'malformed') {
          res.write('data: {"id": "x", "choices": [ this is not json\n\n');
          res.end();
        } else if (failure.kind === 'disconnect') {
          // Let what was written reach the client first, as when a server process dies mid-stream.
          await sleep(30);
          res.destroy();
        } else {
          res.write(`data: ${JSON.stringify({ error: { message: 'CUDA out of memory (simulated)', code: 500 } })}\n\n`);
          res.write('data: [DONE]\n\n');
          res.end();
        }
        rec.endAtMs = performance.now();
        return;
      }
      const n = Math.min(o.tokensPerChunk, maxTokens - sent);
      sent += n;
      const last = sent >= maxTokens && failure?.kind !== 'no-done';
      if (rec.firstTokenAtMs === null) rec.firstTokenAtMs = performance.now();
      res.write(chunk(' tok'.repeat(n), last ? 'length' : null));
      if (sent < maxTokens && o.decodeMsPerToken > 0) await sleep(o.decodeMsPerToken * n);
    }
    rec.completionTokens = sent;
    counters.generationTokens += sent;
    counters.requestsDone++;
    pushIteration();
    if (failure?.kind === 'no-done') {
      res.end();
      rec.endAtMs = performance.now();
      return;
    }
    if (wantUsage) {
      res.write(
        `data: ${JSON.stringify({
          id,
          choices: [],
          usage: { prompt_tokens: tokens.length, completion_tokens: sent, total_tokens: tokens.length + sent, prompt_tokens_details: { cached_tokens: gpuHit + hostHit } },
        })}\n\n`,
      );
    }
    rec.endAtMs = performance.now();
    if (failure?.kind === 'stall-after-finish') {
      req.socket.on('close', () => res.destroy());
      return;
    }
    res.write('data: [DONE]\n\n');
    res.end();
  };

  const http1 = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (opts.apiKey && req.headers.authorization !== `Bearer ${opts.apiKey}`) {
      res.writeHead(401, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'invalid API key' } }));
      return;
    }
    if (req.method === 'GET' && url.pathname === '/v1/models') {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data: [{ id: o.model, object: 'model', ...(opts.maxModelLen ? { max_model_len: opts.maxModelLen } : {}) }] }));
      return;
    }
    if (req.method === 'GET' && url.pathname === '/metrics') {
      server.metricsScrapes++;
      if (o.flavor === 'none') {
        res.writeHead(404).end('not found');
        return;
      }
      if (o.flavor === 'trtllm') {
        const out = iterQueue;
        iterQueue = [];
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(out));
        return;
      }
      res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8' });
      res.end(metricsText());
      return;
    }
    if (req.method === 'GET' && url.pathname === '/prometheus/metrics' && o.flavor === 'trtllm') {
      server.metricsScrapes++;
      res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8' });
      res.end(trtllmPrometheus());
      return;
    }
    if (req.method === 'POST' && (url.pathname === '/v1/completions' || url.pathname === '/v1/chat/completions')) {
      let raw = '';
      req.setEncoding('utf8');
      req.on('data', (d: string) => (raw += d));
      req.on('end', () => {
        let body: Record<string, unknown>;
        try {
          body = JSON.parse(raw) as Record<string, unknown>;
        } catch {
          res.writeHead(400, { 'Content-Type': 'application/json' });
          res.end(JSON.stringify({ error: { message: 'invalid JSON body' } }));
          return;
        }
        handleCompletion(req, res, url.pathname, body).catch(() => res.destroy());
      });
      return;
    }
    res.writeHead(404, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ detail: 'Not Found' }));
  });
  await new Promise<void>((resolve, reject) => {
    http1.once('error', reject);
    http1.listen(opts.port ?? 0, '127.0.0.1', resolve);
  });
  const port = (http1.address() as AddressInfo).port;
  server.port = port;
  server.url = `http://127.0.0.1:${port}`;
  server.close = () =>
    new Promise<void>((resolve) => {
      http1.closeAllConnections();
      http1.close(() => resolve());
    });
  return server;
}
