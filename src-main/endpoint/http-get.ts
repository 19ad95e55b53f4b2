// GETs of the server's small pages (its model list before the run, its metrics before and after)
// through node:http(s), as the completions go (openai-client.ts). Not fetch: fetch refuses the
// WHATWG "bad ports" (6000, 6665–6669, 10080 …) without trying, so a server listening on one would
// answer every completion yet look unreachable to the preflight and unavailable to the scrapes.
import http from 'node:http';
import https from 'node:https';

/** What a GET came to. Never thrown: a page that cannot be had is an answer too. */
export type PageAnswer =
  /** 2xx, the body read whole (it fitted in maxBytes). */
  | { kind: 'page'; status: number; body: string }
  /** Another status: the body is not read. */
  | { kind: 'status'; status: number; statusText: string }
  /** Longer than maxBytes: announced so (`declaredBytes`, nothing read) or found while reading (null). */
  | { kind: 'too-long'; declaredBytes: number | null }
  /** No answer: `error` is the socket's code (ECONNREFUSED …) or message; `timedOut` when timeoutMs ran out. */
  | { kind: 'failed'; error: string; timedOut: boolean };

export interface PageGetOptions {
  headers?: Record<string, string>;
  /** Over everything: connecting, the headers, the body, redirects. */
  timeoutMs: number;
  /** The run's cancel signal. */
  signal?: AbortSignal;
  maxBytes: number;
}

/** Redirects followed (vLLM answers /metrics with a redirect to /metrics/; fetch followed it). */
const MAX_REDIRECTS = 5;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** GETs `url`, following redirects, bounded in time and size. */
export async function getPage(url: string, opts: PageGetOptions): Promise<PageAnswer> {
  const timeout = AbortSignal.timeout(opts.timeoutMs);
  const signal = opts.signal ? AbortSignal.any([timeout, opts.signal]) : timeout;
  let at = new URL(url);
  let headers = opts.headers ?? {};
  try {
    for (let hop = 0; ; hop++) {
      const res = await get(at, headers, signal);
      const status = res.statusCode ?? 0;
      const location = res.headers.location;
      if (REDIRECTS.has(status) && location !== undefined && hop < MAX_REDIRECTS) {
        res.destroy();
        const next = new URL(location, at);
        // As fetch does: credentials do not follow a redirect to another origin.
        if (next.origin !== at.origin) headers = Object.fromEntries(Object.entries(headers).filter(([k]) => k.toLowerCase() !== 'authorization'));
        at = next;
        continue;
      }
      if (status < 200 || status > 299) {
        res.destroy();
        return { kind: 'status', status, statusText: res.statusMessage ?? '' };
      }
      const declared = Number(res.headers['content-length'] ?? '0');
      if (declared > opts.maxBytes) {
        res.destroy();
        return { kind: 'too-long', declaredBytes: declared };
      }
      const parts: Buffer[] = [];
      let bytes = 0;
      for await (const b of res as AsyncIterable<Buffer>) {
        bytes += b.length;
        // Leaving the loop destroys the response: a chunked page longer than the limit is read no further.
        if (bytes > opts.maxBytes) return { kind: 'too-long', declaredBytes: null };
        parts.push(b);
      }
      return { kind: 'page', status, body: Buffer.concat(parts).toString('utf8') };
    }
  } catch (err) {
    if (timeout.aborted) return { kind: 'failed', error: `no answer within ${opts.timeoutMs} ms`, timedOut: true };
    if (opts.signal?.aborted) return { kind: 'failed', error: 'cancelled', timedOut: false };
    const e = err as NodeJS.ErrnoException;
    return { kind: 'failed', error: e.code ?? e.message, timedOut: false };
  }
}

function get(u: URL, headers: Record<string, string>, signal: AbortSignal): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const lib = u.protocol === 'https:' ? https : http;
    const req = lib.get(u, { headers, signal }, resolve);
    req.on('error', reject);
  });
}
