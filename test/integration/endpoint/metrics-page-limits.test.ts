// Scraping a metrics page from a real HTTP server on loopback: a page is read whole when it fits,
// and refused, without reading on, when it is larger than the limit, whether its size is announced
// (Content-Length) or only found while reading (chunked transfer encoding).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { scrapeMetricsPage } from '../../../src-main/endpoint/server-metrics.ts';

const LINE = 'vllm:prefix_cache_hits_total{engine="0",model_name="m"} 7\n';
const servers: http.Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});

/** Serves `lines` metric lines, chunked or with a Content-Length; counts the bytes it managed to send. */
async function metricsServer(lines: number, chunked: boolean): Promise<{ url: string; sent: () => number }> {
  let sent = 0;
  const server = http.createServer((req, res) => {
    res.setHeader('Content-Type', 'text/plain; version=0.0.4');
    if (!chunked) res.setHeader('Content-Length', String(lines * LINE.length));
    let i = 0;
    const pump = (): void => {
      while (i < lines) {
        i++;
        sent += LINE.length;
        if (!res.write(LINE)) {
          res.once('drain', pump);
          return;
        }
      }
      res.end();
    };
    res.on('close', () => (i = lines));
    pump();
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`, sent: () => sent };
}

describe('scrapeMetricsPage size limit', () => {
  it('reads a chunked page that fits', async () => {
    const s = await metricsServer(100, true);
    const snap = await scrapeMetricsPage(s.url, { timeoutMs: 5_000, maxBytes: 100 * LINE.length });
    expect(snap.format).toBe('prometheus');
  });

  it('refuses a page announced larger than the limit before reading it', async () => {
    const s = await metricsServer(100, false);
    const snap = await scrapeMetricsPage(s.url, { timeoutMs: 5_000, maxBytes: 10 * LINE.length });
    expect(snap).toEqual({ url: s.url, format: 'unavailable', error: `the page is ${100 * LINE.length} bytes (more than ${10 * LINE.length})` });
  });

  it('stops reading a chunked page once it passes the limit, instead of reading it all', async () => {
    const lines = 2_000_000; // ~120 MB if read to the end
    const s = await metricsServer(lines, true);
    const maxBytes = 64 * 1024;
    const snap = await scrapeMetricsPage(s.url, { timeoutMs: 20_000, maxBytes });
    expect(snap).toEqual({ url: s.url, format: 'unavailable', error: `the page is more than ${maxBytes} bytes (read no further)` });
    // The server could push what the socket buffers held, and no more: far from the whole page.
    await new Promise((r) => setTimeout(r, 50));
    expect(s.sent()).toBeLessThan((lines * LINE.length) / 10);
  });
});

describe('scrapeMetricsPage redirects', () => {
  it('follows a redirect, as a page mounted under a path (/metrics → /metrics/) answers', async () => {
    const server = http.createServer((req, res) => {
      if (req.url === '/metrics') {
        res.writeHead(307, { Location: '/metrics/' });
        res.end();
        return;
      }
      res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4' });
      res.end(LINE);
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`;
    const snap = await scrapeMetricsPage(url, { timeoutMs: 5_000 });
    expect(snap.format).toBe('prometheus');
  });
});
