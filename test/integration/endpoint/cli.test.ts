// `kvbench endpoint` as a user runs it (bin/kvbench.js in a child process) against fake OpenAI
// servers on 127.0.0.1: two systems run, stored, compared, listed, shown, exported and read back;
// bad input, an unreachable server, a partial run and Ctrl-C.
import fs from 'node:fs';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { EndpointComparison, EndpointRunRecord } from '../../../src-shared/domain/endpoint.ts';
import { explain, makeTempDir, removeTempDirs, runCli, startCli, waitFor } from '../cli/cli-harness.ts';
import { startFakeServer, type FakeServer, type FakeServerOptions } from './fake-openai-server.ts';

const servers: FakeServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});
afterAll(() => removeTempDirs());
async function server(o: FakeServerOptions): Promise<FakeServer> {
  const s = await startFakeServer(o);
  servers.push(s);
  return s;
}

let dir: string;
let workload: string;
beforeAll(async () => {
  dir = makeTempDir();
  workload = path.join(dir, 'workload.json');
  const r = await runCli(
    ['workload', 'generate', '--contexts', '256', '512', '--batches-per-context', '3', '--batch-sizes', '2', '3', '--prompt-pool-size', '3', '--reuse-start-batch', '1', '--generation-tokens', '4', '--seed', '5', '--out', workload],
    { cwd: dir },
  );
  expect(r.code, explain(r)).toBe(0);
});

const runArgs = (s: FakeServer, label: string, db: string, extra: string[] = []): string[] => [
  'endpoint', 'run', '--url', s.url, '--model', 'fake-model', '--workload', workload, '--system-label', label, '--db', db, '--prompt-salt', `salt-${label}`, ...extra,
];

describe('kvbench endpoint (CLI)', () => {
  it('runs two systems, stores them, compares them with ratios, lists, shows and exports them', async () => {
    const db = path.join(dir, 'two.db');
    const results = path.join(dir, 'results.json');
    const pcie = await server({ flavor: 'vllm', gpuBlocks: 40, hostBlocks: 400, prefillMsPerToken: 0.1, decodeMsPerToken: 1 });
    const a = await runCli(runArgs(pcie, 'pcie', db, ['--notes', 'PCIe Gen5 baseline', '--output', results]), { cwd: dir });
    expect(a.code, explain(a)).toBe(0);
    expect(a.stdout).toMatch(/^Endpoint run 1 — pcie: COMPLETE/);
    expect(a.stdout).toMatch(/TTFT, reused prompts/);
    expect(a.stdout).toMatch(/Offload cache hit rate \(run\)/);
    expect(a.stderr).toMatch(/batch 1\/6 \(context 256, [23] request\(s\)\): [23] ok/);
    expect(a.stderr).toMatch(/stored as endpoint run 1 under 'pcie'/);
    const c2c = await server({ flavor: 'trtllm', gpuBlocks: 400, hostBlocks: 400, prefillMsPerToken: 0.02, decodeMsPerToken: 0.5 });
    const b = await runCli(runArgs(c2c, 'c2c', db, ['--notes', 'C2C coherent link', '--output', results, '--api', 'chat']), { cwd: dir });
    expect(b.code, explain(b)).toBe(0);
    expect(b.stdout).toMatch(/KV block reuse rate \(run\)/);

    const cmp = await runCli(['endpoint', 'compare', 'pcie', 'c2c', '--db', db], { cwd: dir });
    expect(cmp.code, explain(cmp)).toBe(0);
    expect(cmp.stdout).toMatch(/^Endpoint comparison: A = pcie \(1 run\(s\): 1\) vs B = c2c \(1 run\(s\): 2\)/);
    expect(cmp.stdout).toMatch(/TTFT P50\s+ms\s+[\d.,]+\s+[\d.,]+\s+[\d.]+x/);
    expect(cmp.stdout).toMatch(/Server cache metrics/);
    const cj = await runCli(['endpoint', 'compare', 'pcie', 'c2c', '--db', db, '--json'], { cwd: dir });
    const comparison = JSON.parse(cj.stdout) as EndpointComparison;
    const ttft = comparison.rows.find((r) => r.metric.key === 'ttft_p50_ms')!;
    expect(ttft.ratio).toBeCloseTo(ttft.a! / ttft.b!, 12);
    for (const k of ['requests_per_s', 'output_tokens_per_s', 'ttft_p95_ms', 'ttft_p99_ms', 'latency_p50_ms', 'latency_p95_ms', 'latency_p99_ms', 'server.prompt_tokens']) {
      expect(comparison.rows.find((r) => r.metric.key === k), k).toBeDefined();
    }
    // One workload file, but c2c ran --api chat: not the same requests, and compare says which flag differs.
    expect(comparison.warnings).toEqual([
      'the runs did not send the same requests (requests digests differ): the numbers are not directly comparable',
      'the API (--api) differs between the runs ("completions" vs "chat")',
    ]);

    const list = await runCli(['endpoint', 'list', '--db', db], { cwd: dir });
    expect(list.stdout.split('\n').filter((l) => /^\s*\d+\s+(pcie|c2c)\s+complete/.test(l))).toHaveLength(2);
    expect(list.stdout).toMatch(/cache hit %/);
    expect(list.stdout).toMatch(/\s\d+\.\d$/m); // the rate, in the listings' one definition
    const show = await runCli(['endpoint', 'show', '1', '--requests', '--db', db], { cwd: dir });
    expect(show.code, explain(show)).toBe(0);
    expect(show.stdout).toMatch(/notes: PCIe Gen5 baseline/);
    expect(show.stdout).toMatch(/#0 b0_r0 batch 0 ctx256_p0 ctx 256: ok ttft [\d.]+ ms e2e [\d.]+ ms 4 tok \(usage\)/);
    const shown = JSON.parse((await runCli(['endpoint', 'show', '2', '--json', '--requests', '--db', db], { cwd: dir })).stdout) as EndpointRunRecord & { requests: unknown[] };
    expect(shown.config).toMatchObject({ api: 'chat', systemLabel: 'c2c', notes: 'C2C coherent link', promptSalt: 'salt-c2c', workloadFile: workload });
    expect(shown.requests).toHaveLength(shown.aggregates.requestsTotal);
    expect(c2c.requests).toHaveLength(shown.aggregates.requestsTotal);

    // Exports, read back.
    for (const ext of ['csv', 'json', 'xlsx']) {
      const out = path.join(dir, `endpoint.${ext}`);
      const e = await runCli(['endpoint', 'export', '--out', out, '--db', db], { cwd: dir });
      expect(e.code, explain(e)).toBe(0);
      expect(e.stderr).toMatch(new RegExp(`exported 2 endpoint run\\(s\\) to .*\\(${ext}`));
    }
    const csv = fs.readFileSync(path.join(dir, 'endpoint.csv'), 'utf8').trimEnd().split('\r\n');
    expect(csv).toHaveLength(3);
    expect(csv[1]).toMatch(/^1,pcie,complete,/);
    expect(csv[2]).toMatch(/^2,c2c,complete,/);
    const json = JSON.parse(fs.readFileSync(path.join(dir, 'endpoint.json'), 'utf8')) as { runs: (EndpointRunRecord & { requests: unknown[] })[]; comparison: EndpointComparison };
    expect(json.runs.map((r) => r.systemLabel)).toEqual(['pcie', 'c2c']);
    expect(json.comparison.labelA).toBe('pcie');
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(path.join(dir, 'endpoint.xlsx'));
    expect(wb.worksheets.map((w) => w.name)).toEqual(['Runs', 'Requests', 'By context', 'Server metrics', 'Comparison', 'About']);
    const reqCsv = path.join(dir, 'requests.csv');
    const rq = await runCli(['endpoint', 'export', '--out', reqCsv, '--label', 'c2c', '--requests', '--db', db], { cwd: dir });
    expect(rq.code, explain(rq)).toBe(0);
    expect(fs.readFileSync(reqCsv, 'utf8').trimEnd().split('\r\n')).toHaveLength(1 + shown.aggregates.requestsTotal);

    // The study's results file: both systems under their labels, with its aggregate keys.
    const res = JSON.parse(fs.readFileSync(results, 'utf8')) as { format: string; runs: Record<string, { aggregate: Record<string, number>; log_metrics: Record<string, unknown>; samples: unknown[] }[]> };
    expect(res.format).toBe('kvbench-endpoint-results');
    expect(Object.keys(res.runs)).toEqual(['pcie', 'c2c']);
    expect(Object.keys(res.runs.pcie[0].aggregate)).toEqual(
      expect.arrayContaining(['throughput_req_per_s', 'ttft_p50_s', 'ttft_p95_s', 'ttft_p99_s', 'latency_p50_s', 'latency_p95_s', 'latency_p99_s']),
    );
    expect(res.runs.c2c[0].log_metrics.reused_blocks).toBe(c2c.counters.reusedBlocks);
    expect(res.runs.pcie[0].log_metrics.reloaded_bytes).toBe(pcie.counters.reloadBytes);
    // One cache hit rate, the listings' own: cached ÷ prompt tokens from the server's usage, counting
    // GPU prefix hits and offload reloads alike (the fake server: its GPU and host tier hits).
    const served = pcie.requests.reduce((x, r) => ({ hit: x.hit + r.gpuHitTokens + r.hostHitTokens, all: x.all + r.promptTokens }), { hit: 0, all: 0 });
    expect(res.runs.pcie[0].log_metrics.cache_hit_rate).toBeCloseTo(served.hit / served.all, 12);
    expect(res.runs.pcie[0].log_metrics.cache_hit_rate_source).toBe('cached ÷ prompt tokens (server usage)');

    const help = await runCli(['endpoint', 'delete', '--help'], { cwd: dir });
    expect(help.code, explain(help)).toBe(0);
    expect(help.stdout).toMatch(/^Usage: kvbench endpoint delete ID \[--db PATH\]/);
    const del = await runCli(['endpoint', 'delete', '2', '--db', db], { cwd: dir });
    expect(del.code, explain(del)).toBe(0);
    const none = await runCli(['endpoint', 'compare', 'pcie', 'c2c', '--db', db], { cwd: dir });
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/no complete runs for c2c; stored labels: pcie \(1\/1 complete\)/);
  }, 180_000); // about fifteen CLI processes, each a second or so of Node start-up on a loaded machine

  it('trtllm-serve with a drained JSON queue: block counters that are totals since the server started are flagged in show, compare, export and --output', async () => {
    const db = path.join(dir, 'trt.db');
    const results = path.join(dir, 'trt-results.json');
    const csvOut = path.join(dir, 'trt.csv');
    const trt = await server({ flavor: 'trtllm', gpuBlocks: 400, hostBlocks: 400, prefillMsPerToken: 0.02, decodeMsPerToken: 0.2 });
    // Only the JSON iteration statistics (no /prometheus/metrics): each "after" read drains the queue, so the next run has no baseline.
    const args = (label: string): string[] => [
      'endpoint', 'run', '--url', trt.url, '--model', 'fake-model', '--workload', workload, '--system-label', label, '--db', db,
      '--prompt-salt', 'fixed', '--metrics-url', `${trt.url}/metrics`, '--output', results, '--max-batches', '2',
    ];
    for (const label of ['trt', 'trt', 'trt2']) {
      const r = await runCli(args(label), { cwd: dir });
      expect(r.code, explain(r)).toBe(0);
    }
    const show = await runCli(['endpoint', 'show', '2', '--db', db], { cwd: dir });
    expect(show.stdout).toMatch(/Reused KV blocks\s+trtllm-json:reusedBlocks\s+[\d,]+ \*\n/);
    expect(show.stdout).toMatch(/^    \* Reused KV blocks, Missed KV blocks, Newly allocated KV blocks: totals since the server started/m);
    const cmp = await runCli(['endpoint', 'compare', 'trt', 'trt2', '--db', db, '--json'], { cwd: dir });
    expect(cmp.code, explain(cmp)).toBe(0);
    const c = JSON.parse(cmp.stdout) as EndpointComparison;
    expect(c.warnings).toEqual(expect.arrayContaining([expect.stringMatching(/^run 2 \(trt\): values marked \* may not be the run's own share.* — Reused KV blocks \(Δ\), Missed KV blocks \(Δ\).*: totals since the server started/)]));
    expect(c.rows.find((r) => r.metric.key === 'server.block_reuse_rate')).toMatchObject({ flaggedA: [2, 1], flaggedB: [3], better: null });
    // One salt, one server: runs 2 and 3 found run 1's prompts cached.
    expect(c.warnings).toEqual(expect.arrayContaining([expect.stringMatching(/^run 1 \(trt\), run 2 \(trt\), run 3 \(trt2\) sent the same prompt texts \(--prompt-salt fixed\) to one server .*run 2 \(trt\), run 3 \(trt2\) started with the earlier runs' prompts possibly still cached/)]));
    const text = await runCli(['endpoint', 'compare', 'trt', 'trt2', '--db', db], { cwd: dir });
    expect(text.stdout).toMatch(/KV block reuse rate \(run\)\s+ratio\s+[\d.]+% \(n=2\) \*\s+[\d.]+% \*\s+[\d.]+x\s+\*/);
    const e = await runCli(['endpoint', 'export', '--out', csvOut, '--db', db], { cwd: dir });
    expect(e.code, explain(e)).toBe(0);
    const lines = fs.readFileSync(csvOut, 'utf8').trimEnd().split('\r\n');
    expect(lines[0]).toContain('server_metric_caveats');
    expect(lines[2]).toMatch(/^2,trt,complete,.*server\.reused_blocks: totals since the server started/);
    const res = JSON.parse(fs.readFileSync(results, 'utf8')) as { runs: Record<string, { log_metrics: { reused_blocks: number; caveats: Record<string, string> } }[]> };
    expect(res.runs.trt[1].log_metrics.caveats.reused_blocks).toMatch(/^totals since the server started/);
  });

  it('a server that ignores include_usage: output tokens counted as chunks are flagged in the run summary and in compare', async () => {
    const db = path.join(dir, 'chunks.db');
    const usage = await server({ flavor: 'vllm', decodeMsPerToken: 0.2 });
    const chunky = await server({ flavor: 'vllm', decodeMsPerToken: 0.2, supportsUsage: false, tokensPerChunk: 4 });
    const a = await runCli(runArgs(usage, 'usage', db, ['--max-batches', '2', '--metrics-url', 'none']), { cwd: dir });
    expect(a.code, explain(a)).toBe(0);
    expect(a.stdout).not.toMatch(/counted as content chunks/);
    const b = await runCli(runArgs(chunky, 'chunky', db, ['--max-batches', '2', '--metrics-url', 'none']), { cwd: dir });
    expect(b.code, explain(b)).toBe(0);
    // 4 tokens a request (max_tokens 4, ignore_eos) in one chunk of 4: counted as 1, and the run says so.
    expect(b.stdout).toMatch(/! output tokens of (\d+) of \1 successful request\(s\) were counted as content chunks \(the server sent no usage\); \1 of them stopped at max_tokens .*: undercounted/);
    const cmp = await runCli(['endpoint', 'compare', 'usage', 'chunky', '--db', db], { cwd: dir });
    expect(cmp.code, explain(cmp)).toBe(0);
    expect(cmp.stdout).toMatch(/! run 2 \(chunky\): output tokens of \d+ of \d+ successful request\(s\) were counted as content chunks/);
    expect(cmp.stdout).toMatch(/Requests with output tokens counted as chunks\s+count\s+0\s+\d+/);
  });

  it('refuses bad input with every problem at once, and an unreachable server before storing anything', async () => {
    const db = path.join(dir, 'bad.db');
    const r = await runCli(
      ['endpoint', 'run', '--url', 'ftp://x', '--temperature', 'hot', '--top-p', '0', '--max-tokens', '1.5', '--system-label', 'has space', '--workload', path.join(dir, 'missing.json'), '--request-timeout-s', '3000000', '--max-batches', '0', '--stop-after-dead-batches', '0', '--db', db],
      { cwd: dir },
    );
    expect(r.code).toBe(1);
    for (const m of [
      /required: --model/,
      /--url: must be http:\/\/ or https:\/\/, got ftp:\/\//,
      /--temperature takes a number, got 'hot'/,
      /--top-p must be in \(0, 1\]/,
      /--max-tokens takes a whole number, got '1.5'/,
      /--system-label may hold/,
      /missing\.json does not exist/,
      /--request-timeout-s must be at most 2147483 \(about 24.8 days, the longest timer Node can set\), got 3000000/,
      /--max-batches must be positive/,
      /--stop-after-dead-batches must be positive/,
    ]) {
      expect(r.stderr).toMatch(m);
    }
    // Every problem names its flag (the missing workload: its file).
    for (const line of r.stderr.split('\n').slice(1).filter((l) => l.trim() !== '')) expect(line).toMatch(/--[a-z]|missing\.json/);
    // An --output naming the workload (or any file of another kind) is refused before a request is sent.
    const workloadBefore = fs.readFileSync(workload, 'utf8');
    const live = await server({ flavor: 'vllm' });
    const overInput = await runCli(runArgs(live, 'x', db, ['--output', workload]), { cwd: dir });
    expect(overInput.code).toBe(1);
    expect(overInput.stderr).toMatch(/--output: .*workload\.json exists and is not a kvbench endpoint results file: not overwritten/);
    expect(live.requests.length).toBe(0);
    expect(fs.readFileSync(workload, 'utf8')).toBe(workloadBefore);
    const noDir = await runCli(runArgs(live, 'x', db, ['--output', path.join(dir, 'no-such-dir', 'r.json')]), { cwd: dir });
    expect(noDir.code).toBe(1);
    expect(noDir.stderr).toMatch(/--output: its folder .*no-such-dir does not exist/);
    await live.close();
    servers.splice(servers.indexOf(live), 1);
    const unknown = await runCli(['endpoint', 'run', '--bogus'], { cwd: dir });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/Unknown option '--bogus'/);
    const s = await server({ flavor: 'vllm' });
    const url = s.url;
    await s.close();
    servers.length = 0;
    const gone = await runCli(['endpoint', 'run', '--url', url, '--model', 'fake-model', '--workload', workload, '--system-label', 'x', '--db', db], { cwd: dir });
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/cannot reach http:\/\/127\.0\.0\.1:\d+\/v1 \(ECONNREFUSED\): is the server running\? Nothing was stored\./);
    // Nothing was stored: not even the database was created (list refuses a --db naming no file).
    const list = await runCli(['endpoint', 'list', '--db', db], { cwd: dir });
    expect(list.code).toBe(1);
    expect(list.stderr).toMatch(/no database at .*bad\.db/);
    expect(fs.existsSync(db)).toBe(false);
    const help = await runCli(['endpoint', 'run', '--help'], { cwd: dir });
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/--system-label LABEL/);
  });

  it("warns before sending when the workload's longest request exceeds the server's max_model_len", async () => {
    const s = await server({ flavor: 'vllm', maxModelLen: 300 });
    const r = await runCli(runArgs(s, 'short', path.join(dir, 'short.db')), { cwd: dir });
    expect(r.code, explain(r)).toBe(0); // the fake server does not enforce it; a real one answers HTTP 400
    expect(r.stderr).toMatch(/warning: the server's max_model_len for 'fake-model' is 300 tokens, but the workload's longest request is 516 \(context 512 \+ 4 generated/);
    const fits = await server({ flavor: 'vllm', maxModelLen: 516 });
    const ok = await runCli(runArgs(fits, 'fits', path.join(dir, 'fits.db'), ['--max-batches', '1']), { cwd: dir });
    expect(ok.code, explain(ok)).toBe(0);
    expect(ok.stderr).not.toMatch(/max_model_len/);
  });

  it('a server on a port fetch refuses (the WHATWG "bad ports": 10080, 6000 …) is reached by the preflight and the metrics scrapes too', async () => {
    // Any free one of them: the list is fetch's, the test needs just one that binds here.
    const badPorts = [10080, 6000, 6665, 6666, 6667, 6668, 6669, 6566, 5060, 5061, 4190, 6697];
    let s: FakeServer | null = null;
    for (const port of badPorts) {
      s = await server({ flavor: 'vllm', port }).catch(() => null);
      if (s) break;
    }
    if (!s) throw new Error(`none of the ports ${badPorts.join(', ')} is free here`);
    const r = await runCli(runArgs(s, 'badport', path.join(dir, 'badport.db'), ['--max-batches', '1']), { cwd: dir });
    expect(r.code, explain(r)).toBe(0);
    expect(r.stderr).toContain(`metrics page ${s.url}/metrics: prometheus`);
    expect(s.requests.length).toBeGreaterThan(0);
  });

  it('a database it cannot use is refused before the first request', async () => {
    const s = await server({ flavor: 'vllm' });
    const junk = path.join(dir, 'junk.sqlite');
    fs.writeFileSync(junk, 'not a db\n');
    for (const db of [junk, dir]) {
      const r = await runCli(runArgs(s, 'junkdb', db), { cwd: dir });
      expect(r.code, explain(r)).toBe(1);
      // Prefixed as the run's other lines, one sentence ended before the next whatever the store's message.
      if (db === junk) expect(r.stderr).toMatch(/^kvbench endpoint run: cannot use the database: .*junk\.sqlite is not a SQLite database .*[^.]\. Nothing was sent\.$/m);
      else expect(r.stderr).toContain(`kvbench endpoint run: cannot use the database: ${dir} is not a file. Nothing was sent.\n`);
    }
    expect(s.requests).toHaveLength(0);
    expect(fs.readFileSync(junk, 'utf8')).toBe('not a db\n');
  });

  it('a database that refuses the run at the end: the run is still printed and kept in --output, else in a file of its own', async () => {
    const first = (JSON.parse(fs.readFileSync(workload, 'utf8')) as { batches: { requests: unknown[] }[] }).batches[0].requests.length;
    for (const withOutput of [true, false]) {
      const cwd = makeTempDir();
      const db = path.join(cwd, 'lost.db');
      const results = path.join(cwd, 'lost.json');
      // The first batch is answered; the second stalls until its request timeout, while the test
      // replaces the database (opened fine before the run) with something that is not one.
      const s = await server({ flavor: 'vllm', failure: (i) => (i >= first ? { kind: 'stall' } : null) });
      const p = startCli(runArgs(s, 'lost', db, ['--max-batches', '2', '--request-timeout-s', '3', ...(withOutput ? ['--output', results] : [])]), { cwd });
      await waitFor('the stalled requests', () => s.requests.length > first);
      for (const f of [`${db}-wal`, `${db}-shm`]) fs.rmSync(f, { force: true });
      fs.writeFileSync(db, 'not a db any more\n');
      const r = await p.done;
      expect(r.code, explain(r)).toBe(1);
      expect(r.stderr).toMatch(/the run finished but could not be stored: .*is not a SQLite database/);
      expect(r.stdout).toMatch(/^Endpoint run \(not stored\) — lost: PARTIAL/);
      const kept = withOutput ? results : path.join(cwd, fs.readdirSync(cwd).find((f) => /^kvbench-endpoint-run-.*\.json$/.test(f)) ?? 'none');
      expect(r.stderr).toContain(withOutput ? `the run is in ${results} (not in the database)` : `the run is saved in ${kept}`);
      const doc = JSON.parse(fs.readFileSync(kept, 'utf8')) as { format: string; runs: Record<string, { run_meta: { run_id: number | null; status: string }; samples: unknown[] }[]> };
      expect(doc.format).toBe('kvbench-endpoint-results');
      expect(doc.runs.lost).toHaveLength(1);
      expect(doc.runs.lost[0].run_meta).toMatchObject({ run_id: null, status: 'partial' });
      expect(doc.runs.lost[0].samples.length).toBeGreaterThan(first);
    }
  }, 60_000);

  it('a partial run exits 3 and is stored with what failed', async () => {
    const db = path.join(dir, 'partial.db');
    const s = await server({ flavor: 'vllm', failure: (i) => (i === 0 ? { kind: 'http', status: 500, message: 'boom' } : null) });
    const r = await runCli(runArgs(s, 'flaky', db), { cwd: dir });
    expect(r.code, explain(r)).toBe(3);
    expect(r.stdout).toMatch(/^Endpoint run 1 — flaky: PARTIAL \(1 of \d+ request\(s\) did not succeed \(1 http error\); first: b0_r\d: HTTP 500 Internal Server Error: boom\)/);
    expect(r.stderr).toMatch(/1 failed \(HTTP 500 Internal Server Error: boom\)/);
    const cmp = await runCli(['endpoint', 'compare', 'flaky', 'flaky', '--include-partial', '--db', db], { cwd: dir });
    expect(cmp.code, explain(cmp)).toBe(0);
    expect(cmp.stdout).toMatch(/! run 1 \(flaky\) is partial/);
  });

  it.each([
    ['SIGINT', 130, 'by the user'],
    ['SIGTERM', 143, 'by SIGTERM'],
    // A dropped SSH session; sent to the CLI alone here (its own process group is the shell's business).
    ['SIGHUP', 129, 'by SIGHUP'],
  ] as const)('%s cancels the requests in flight, stores what finished as partial, and exits %i', async (signal, code, by) => {
    const db = path.join(dir, `${signal}.db`);
    const results = path.join(dir, `${signal}.json`);
    // The first batch is answered; every later request stalls.
    const first = (JSON.parse(fs.readFileSync(workload, 'utf8')) as { batches: { requests: unknown[] }[] }).batches[0].requests.length;
    const s = await server({ flavor: 'vllm', failure: (i) => (i >= first ? { kind: 'stall' } : null) });
    const p = startCli(runArgs(s, 'stopped', db, ['--idle-timeout-s', '60', '--output', results]), { cwd: dir });
    await waitFor('the first batch', () => /batch 1\/6/.test(p.stderrSoFar()));
    await waitFor('the stalled requests', () => s.requests.length > first);
    process.kill(p.pid, signal);
    const r = await p.done;
    expect(r.code, explain(r)).toBe(code);
    expect(r.signal).toBeNull();
    expect(r.stderr).toContain(`interrupted by ${signal}: cancelling the requests in flight`);
    expect(r.stdout).toMatch(new RegExp(`stopped: PARTIAL \\(interrupted ${by}; the remaining requests were not sent; .*cancelled.*not sent`));
    const shown = JSON.parse((await runCli(['endpoint', 'show', '1', '--json', '--requests', '--db', db], { cwd: dir })).stdout) as EndpointRunRecord & { requests: { status: string }[] };
    expect(shown.status).toBe('partial');
    expect(shown.requests.slice(0, first).every((q) => q.status === 'ok')).toBe(true);
    expect(shown.requests.some((q) => q.status === 'cancelled')).toBe(true);
    expect(shown.requests.at(-1)?.status).toBe('not_sent');
    // --output has the run too.
    const res = JSON.parse(fs.readFileSync(results, 'utf8')) as { runs: Record<string, unknown[]> };
    expect(res.runs.stopped).toHaveLength(1);
  });
});
