// One streaming completion against an OpenAI-compatible server, measured: time to first token,
// inter-token gaps, end-to-end time, tokens (the server's usage when it reports it, else the content
// chunks counted). node:http(s), not fetch: Node's fetch gives up on its own after 300 s without
// response headers or between two body chunks, and a long prompt queued behind a batch of 128K-token
// prefills can wait longer than that for its first token. The only limits are ours: the request
// timeout over everything, and the idle timeout between chunks once the first token has come
// (before it, the server may be queueing or prefilling: that is TTFT, not a stall). Never throws
// for the server's sake: every way a request can go wrong ends as a status with a reason (see
// REQUEST_STATUSES), and what was received until then is kept.
import http from 'node:http';
import https from 'node:https';
import type { EndpointApi, RequestStatus } from '../../src-shared/domain/endpoint.ts';
import { SseParser } from './sse.ts';

export interface CompletionRequest {
  /** `<base>/completions` or `<base>/chat/completions`. */
  url: string;
  api: EndpointApi;
  model: string;
  prompt: string;
  maxTokens: number;
  temperature: number;
  topP: number;
  ignoreEos: boolean;
  streamUsage: boolean;
  headers?: Record<string, string>;
  /** The serialised request body, when built ahead (a batch builds all its bodies before the first send). */
  body?: string;
  requestTimeoutMs: number;
  /** Longest silence between chunks once the first token has come. */
  idleTimeoutMs: number;
  /** The run's cancel signal (Ctrl-C). */
  signal?: AbortSignal;
  /** Each gap between consecutive content chunks, in ms, as it happens (for the pooled ITL histogram). */
  onGapMs?: (gapMs: number) => void;
}

export interface CompletionOutcome {
  status: RequestStatus;
  httpStatus: number | null;
  error: string | null;
  /** performance.now() when the request was sent. */
  sentAtMs: number;
  ttftMs: number | null;
  e2eMs: number | null;
  tpotMs: number | null;
  outputTokens: number | null;
  outputChunks: number;
  tokenCountSource: 'usage' | 'chunks' | null;
  promptTokens: number | null;
  cachedPromptTokens: number | null;
  finishReason: string | null;
  /** The generated text's length in characters (the text itself is not kept). */
  outputChars: number;
}

const MAX_ERROR_BODY_CHARS = 2000;

/** The request body: OpenAI's fields plus `ignore_eos` (vLLM, SGLang, TensorRT-LLM) when asked for. */
export function requestBody(r: Pick<CompletionRequest, 'api' | 'model' | 'prompt' | 'maxTokens' | 'temperature' | 'topP' | 'ignoreEos' | 'streamUsage'>): Record<string, unknown> {
  const body: Record<string, unknown> = { model: r.model };
  if (r.api === 'chat') body.messages = [{ role: 'user', content: r.prompt }];
  else body.prompt = r.prompt;
  body.max_tokens = r.maxTokens;
  body.temperature = r.temperature;
  body.top_p = r.topP;
  body.stream = true;
  if (r.streamUsage) body.stream_options = { include_usage: true };
  if (r.ignoreEos) body.ignore_eos = true;
  return body;
}

/** A server's error body → its message (OpenAI `{error: {message}}`, FastAPI `{detail}`, or the text). */
export function errorMessageOf(text: string): string {
  const t = text.trim();
  try {
    const j = JSON.parse(t) as { error?: { message?: unknown } | string; message?: unknown; detail?: unknown };
    const m = typeof j.error === 'object' && j.error !== null ? j.error.message : (j.error ?? j.message ?? j.detail);
    if (typeof m === 'string' && m !== '') return m.slice(0, MAX_ERROR_BODY_CHARS);
    if (m !== undefined) return JSON.stringify(m).slice(0, MAX_ERROR_BODY_CHARS);
  } catch {
    // not JSON
  }
  return t.slice(0, MAX_ERROR_BODY_CHARS) || '(empty body)';
}

function causeOf(err: unknown): string {
  const e = err as Error & { cause?: { code?: string; message?: string } };
  const code = e.cause?.code;
  const msg = e.cause?.message ?? e.message;
  return code && msg && !msg.includes(code) ? `${code}: ${msg}` : (msg ?? code ?? String(err));
}

interface Chunk {
  text: string | null;
  finishReason: string | null;
  usage: { prompt: number | null; completion: number | null; cached: number | null } | null;
  error: string | null;
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** One `data:` payload → what it carries; throws when it is not an OpenAI stream chunk. */
export function parseChunk(data: string, api: EndpointApi): Chunk {
  let j: unknown;
  try {
    j = JSON.parse(data);
  } catch (err) {
    throw new Error(`a data line that is not JSON (${(err as Error).message}): ${data.slice(0, 120)}`);
  }
  if (j === null || typeof j !== 'object' || Array.isArray(j)) throw new Error(`a data line that is not a JSON object: ${data.slice(0, 120)}`);
  const o = j as Record<string, unknown>;
  if (o.error !== undefined && o.error !== null) {
    const e = o.error as { message?: unknown } | string;
    return { text: null, finishReason: null, usage: null, error: typeof e === 'string' ? e : typeof e.message === 'string' ? e.message : JSON.stringify(e) };
  }
  let usage: Chunk['usage'] = null;
  if (o.usage && typeof o.usage === 'object') {
    const u = o.usage as Record<string, unknown>;
    const details = (u.prompt_tokens_details ?? null) as Record<string, unknown> | null;
    usage = { prompt: num(u.prompt_tokens), completion: num(u.completion_tokens), cached: details ? num(details.cached_tokens) : null };
  }
  if (!Array.isArray(o.choices)) {
    if (usage) return { text: null, finishReason: null, usage, error: null };
    throw new Error(`a chunk without "choices": ${data.slice(0, 120)}`);
  }
  let text: string | null = null;
  let finishReason: string | null = null;
  for (const c of o.choices as unknown[]) {
    if (!c || typeof c !== 'object') throw new Error(`a choice that is not an object: ${data.slice(0, 120)}`);
    const ch = c as Record<string, unknown>;
    let t: unknown;
    if (api === 'chat') {
      const d = (ch.delta ?? {}) as Record<string, unknown>;
      // Reasoning models stream their reasoning first: it is generated output too.
      t = typeof d.content === 'string' && d.content !== '' ? d.content : d.reasoning_content ?? d.reasoning;
    } else {
      t = ch.text;
    }
    if (typeof t === 'string' && t !== '') text = (text ?? '') + t;
    if (typeof ch.finish_reason === 'string') finishReason = ch.finish_reason;
  }
  return { text, finishReason, usage, error: null };
}

/** finish_reason values with which a server says it gave up on the request (vLLM: abort; SGLang, TensorRT-LLM: error). */
const FAILED_FINISH_REASONS = new Set(['abort', 'error', 'cancelled']);

interface StreamResponse {
  status: number;
  statusText: string;
  contentType: string;
  body: AsyncIterable<Buffer> & { destroy(): void };
}

/** POSTs the body and resolves with the response once its headers arrive; no timeouts of its own. */
function post(url: string, headers: Record<string, string>, body: string, signal: AbortSignal): Promise<StreamResponse> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const lib = u.protocol === 'https:' ? https : http;
    const req = lib.request(u, { method: 'POST', headers: { ...headers, 'Content-Length': Buffer.byteLength(body) }, signal }, (res) => {
      resolve({ status: res.statusCode ?? 0, statusText: res.statusMessage ?? '', contentType: String(res.headers['content-type'] ?? ''), body: res });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** How much of an error page or an unexpected JSON answer is read: it is only quoted. */
export const MAX_QUOTED_BODY_BYTES = 64 * 1024;

/** Reads a body up to `limitBytes`, then stops reading (leaving the loop closes the connection). */
async function readQuotable(body: AsyncIterable<Buffer>, limitBytes = MAX_QUOTED_BODY_BYTES): Promise<string> {
  const parts: Buffer[] = [];
  let bytes = 0;
  for await (const b of body) {
    parts.push(b);
    bytes += b.length;
    if (bytes >= limitBytes) break;
  }
  return Buffer.concat(parts).subarray(0, limitBytes).toString('utf8');
}

/** Sends one streaming completion and measures it. */
export async function streamCompletion(r: CompletionRequest): Promise<CompletionOutcome> {
  const ctrl = new AbortController();
  let abortReason: 'timeout-total' | 'timeout-idle' | null = null;
  const totalTimer = setTimeout(() => {
    abortReason = 'timeout-total';
    ctrl.abort();
  }, r.requestTimeoutMs);
  let idleTimer: NodeJS.Timeout | undefined;
  const armIdle = (): void => {
    clearTimeout(idleTimer);
    if (firstAt === null) return; // waiting for the first token is TTFT: only the request timeout applies
    idleTimer = setTimeout(() => {
      abortReason = 'timeout-idle';
      ctrl.abort();
    }, r.idleTimeoutMs);
  };
  const signal = r.signal ? AbortSignal.any([ctrl.signal, r.signal]) : ctrl.signal;

  const out: CompletionOutcome = {
    status: 'ok',
    httpStatus: null,
    error: null,
    sentAtMs: performance.now(),
    ttftMs: null,
    e2eMs: null,
    tpotMs: null,
    outputTokens: null,
    outputChunks: 0,
    tokenCountSource: null,
    promptTokens: null,
    cachedPromptTokens: null,
    finishReason: null,
    outputChars: 0,
  };
  let firstAt: number | null = null;
  let lastAt: number | null = null;
  /** When the last SSE event (of any kind) arrived. */
  let lastEventAt: number | null = null;
  let done = false;
  let streamError: { status: RequestStatus; error: string } | null = null;
  /** The server said the request is complete ([DONE], or a finish reason that is not a failure): what comes after cannot fail it. */
  const answered = (): boolean => streamError === null && (done || out.finishReason !== null);

  const aborted = (): { status: RequestStatus; error: string } | null => {
    if (abortReason === 'timeout-total') return { status: 'timeout', error: `no complete answer within ${r.requestTimeoutMs / 1000} s (--request-timeout-s)` };
    if (abortReason === 'timeout-idle') return { status: 'timeout', error: `nothing received for ${r.idleTimeoutMs / 1000} s after ${out.outputChunks} chunk(s) (--idle-timeout-s)` };
    if (r.signal?.aborted) return { status: 'cancelled', error: 'interrupted' };
    return null;
  };
  /** `endAt`: when the request ended, if not now (a stream that stalled after its answer ends at its last event). */
  const finish = (status: RequestStatus, error: string | null, endAt: number = performance.now()): CompletionOutcome => {
    const end = endAt;
    clearTimeout(totalTimer);
    clearTimeout(idleTimer);
    out.status = status;
    out.error = error;
    out.e2eMs = end - out.sentAtMs;
    if (firstAt !== null) out.ttftMs = firstAt - out.sentAtMs;
    if (out.outputTokens === null && out.outputChunks > 0) {
      out.outputTokens = out.outputChunks;
      out.tokenCountSource = 'chunks';
    }
    if (firstAt !== null && lastAt !== null && out.outputTokens !== null && out.outputTokens > 1) out.tpotMs = (lastAt - firstAt) / (out.outputTokens - 1);
    return out;
  };

  const body = r.body ?? JSON.stringify(requestBody(r));
  let res: StreamResponse;
  try {
    res = await post(r.url, { 'Content-Type': 'application/json', Accept: 'text/event-stream', ...r.headers }, body, signal);
  } catch (err) {
    const a = aborted();
    return a ? finish(a.status, a.error) : finish('connection_error', causeOf(err));
  }
  out.httpStatus = res.status;
  if (res.status < 200 || res.status > 299) {
    let text = '';
    try {
      text = await readQuotable(res.body);
    } catch {
      // the body broke too: the status says enough
    }
    return finish('http_error', `HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}: ${errorMessageOf(text)}`);
  }
  if (res.contentType.includes('application/json')) {
    const text = await readQuotable(res.body).catch(() => '');
    return finish('malformed_stream', `the server answered with JSON instead of an event stream (does it support "stream": true?): ${text.slice(0, 200)}`);
  }

  const parser = new SseParser();
  const handle = (data: string): boolean => {
    lastEventAt = performance.now();
    if (data.trim() === '[DONE]') {
      done = true;
      return false;
    }
    let c: Chunk;
    try {
      c = parseChunk(data, r.api);
    } catch (err) {
      streamError = { status: 'malformed_stream', error: (err as Error).message };
      return false;
    }
    if (c.error !== null) {
      streamError = { status: 'server_error', error: `the server reported an error mid-stream: ${c.error.slice(0, MAX_ERROR_BODY_CHARS)}` };
      return false;
    }
    if (c.text !== null) {
      const now = performance.now();
      if (firstAt === null) firstAt = now;
      else if (lastAt !== null) r.onGapMs?.(now - lastAt);
      lastAt = now;
      out.outputChunks++;
      out.outputChars += c.text.length;
    }
    if (c.usage) {
      if (c.usage.completion !== null) {
        out.outputTokens = c.usage.completion;
        out.tokenCountSource = 'usage';
      }
      if (c.usage.prompt !== null) out.promptTokens = c.usage.prompt;
      if (c.usage.cached !== null) out.cachedPromptTokens = c.usage.cached;
    }
    if (c.finishReason !== null) {
      out.finishReason = c.finishReason;
      if (FAILED_FINISH_REASONS.has(c.finishReason)) {
        streamError = { status: 'server_error', error: `the server ended the request with finish_reason "${c.finishReason}" after ${out.outputChunks} chunk(s)` };
        return false;
      }
    }
    return true;
  };
  /** Handles the events in order until one ends the stream; false then. */
  const handleAll = (events: readonly { data: string }[]): boolean => events.every((e) => handle(e.data));
  try {
    let open = true;
    for await (const value of res.body) {
      open = handleAll(parser.push(value));
      if (!open) break;
      armIdle();
    }
    if (open) handleAll(parser.end());
  } catch (err) {
    // A stream that had its answer and then stalled (timed out, or cancelled while waiting for [DONE])
    // or broke is a success; it ended with its last event, not when kvbench gave up waiting.
    if (answered()) return finish('ok', null, lastEventAt ?? undefined);
    const a = aborted();
    if (a) return finish(a.status, a.error);
    // The connection broke mid-stream (server stopped, reset, proxy timeout).
    return finish('incomplete', `the stream broke after ${out.outputChunks} chunk(s): ${causeOf(err)}`);
  }
  if (streamError !== null || done) res.body.destroy();
  if (streamError !== null) return finish((streamError as { status: RequestStatus }).status, (streamError as { error: string }).error);
  if (done || out.finishReason !== null) return finish('ok', null);
  return finish('incomplete', `the stream ended without [DONE] or a finish reason after ${out.outputChunks} chunk(s)`);
}
