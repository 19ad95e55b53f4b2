import { describe, expect, it } from 'vitest';
import { COMPARE_VERDICT_LEGEND, EndpointComparisonSchema, type EndpointRunRecord } from '../../../src-shared/domain/endpoint.ts';
import { compareEndpointRuns } from '../../../src-main/endpoint/endpoint-compare.ts';
import { BYTE_UNITS_NOTE, fmt, formatComparison, formatServerMetrics } from '../../../src-main/endpoint/render.ts';
import { runSummary as summary } from './fixtures.ts';

describe('endpoint tables: bytes', () => {
  it('scales sizes and rates to the value in one (binary) convention', () => {
    expect(fmt(0, 'bytes')).toBe('0 B');
    expect(fmt(51_200, 'bytes')).toBe('50.0 KiB');
    expect(fmt(3 * 1024 ** 3, 'bytes')).toBe('3.00 GiB');
    expect(fmt(1_024_000, 'bytes/s')).toBe('1000.0 KiB/s');
    expect(fmt(5 * 1024 ** 2, 'bytes/s')).toBe('5.0 MiB/s');
  });

  it('a small offload is not "0.0 MiB" beside its rate, and the table states the convention', () => {
    const c = compareEndpointRuns('pcie', [summary(1, 'pcie', { 'server.offload_bytes': 0 })], 'c2c', [
      summary(2, 'c2c', { 'server.offload_bytes': 51_200, 'server.offload_bandwidth': 1_024_000 }),
    ]);
    const text = formatComparison(c);
    expect(text).toMatch(/Offloaded bytes.*\s0 B\s+50\.0 KiB\s/);
    expect(text).toMatch(/1000\.0 KiB\/s/);
    expect(text).toContain(BYTE_UNITS_NOTE);
    const shown = formatServerMetrics({
      serverMetrics: {
        pages: [{ url: 'u', format: 'prometheus', engines: ['vllm'], error: null, notes: [] }],
        values: [{ key: 'offload_bytes', source: 'vllm:kv_offload_store_bytes', before: 0, after: 51_200, delta: 51_200, reset: false, sinceServerStart: false }],
        derived: { offload_bandwidth: 1_024_000 },
        rawCounterDeltas: {},
      },
    } as unknown as EndpointRunRecord);
    expect(shown).toMatch(/50\.0 KiB/);
    expect(shown).toMatch(/1000\.0 KiB\/s/);
    expect(shown).toContain(BYTE_UNITS_NOTE);
    // No bytes, no legend.
    expect(formatComparison(compareEndpointRuns('a', [summary(1, 'a', { requests_per_s: 1 })], 'b', [summary(2, 'b', { requests_per_s: 2 })]))).not.toContain(BYTE_UNITS_NOTE);
  });
});

describe('endpoint compare table: noise', () => {
  it('shows each side\'s spread, names a side only beyond noise, and says "within noise" or "?" otherwise', () => {
    const c = compareEndpointRuns(
      'trt',
      [summary(1, 'trt', { requests_per_s: 13.59, ttft_p50_ms: 100 }), summary(2, 'trt', { requests_per_s: 10.84, ttft_p50_ms: 102 })],
      'trt2',
      [summary(3, 'trt2', { requests_per_s: 10.24, ttft_p50_ms: 200 }), summary(4, 'trt2', { requests_per_s: 11.4, ttft_p50_ms: 204 })],
    );
    const text = formatComparison(c);
    // The p column: Welch's t-test on the runs' log values.
    expect(text).toMatch(/Requests\/s\s+req\/s\s+12\.22 \(n=2\)\s+10\.82 \(n=2\)\s+1\.129x\s+within noise\s+0\.48\s+10\.84–13\.59, CV 15\.9%\s+10\.24–11\.40, CV 7\.6%/);
    expect(text).toMatch(/TTFT P50\s+ms\s+101\.0 \(n=2\)\s+202\.0 \(n=2\)\s+0\.500x\s+trt\s+<0\.001\s+100\.0–102\.0, CV 1\.4%/);
    expect(text).toContain("Welch's t-test on log values, two-sided, α = 0.05");
    expect(text).toContain(COMPARE_VERDICT_LEGEND);
    expect(text).not.toMatch(/note: one run/);
    const one = formatComparison(compareEndpointRuns('a', [summary(1, 'a', { ttft_p50_ms: 100 })], 'b', [summary(2, 'b', { ttft_p50_ms: 200 })]));
    expect(one).toMatch(/TTFT P50\s+ms\s+100\.0\s+200\.0\s+0\.500x\s+a\?$/m);
    expect(one).toMatch(/note: one run of a and one of b: no noise estimate is possible/);
    expect(one).not.toMatch(/a min–max, CV/); // no spread columns without a spread
  });
});

describe('endpoint compare: what a verdict rests on', () => {
  it('says the unit is the run, a side one configuration, and why there is no win rate (text and --json alike)', () => {
    const c = compareEndpointRuns(
      'pcie',
      [summary(1, 'pcie', { ttft_p50_ms: 100 }), summary(2, 'pcie', { ttft_p50_ms: 104 }), summary(3, 'pcie', { ttft_p50_ms: 98 })],
      'c2c',
      [summary(4, 'c2c', { ttft_p50_ms: 60 }), summary(5, 'c2c', { ttft_p50_ms: 61 })],
    );
    const row = c.rows.find((r) => r.metric.key === 'ttft_p50_ms')!;
    expect(row).toMatchObject({ nA: 3, nB: 2, noise: 'beyond', better: 'b' });
    const basis =
      'the unit is the run: a side\'s runs are repeats of one configuration (they sent the same requests; compare warns where they did not), ' +
      'and each metric\'s verdict is one test of A\'s runs against B\'s (n a side in the table) — so there is no win rate, which counts ' +
      'configurations (kvbench report --compare): over one configuration it would only restate the verdict';
    const text = formatComparison(c);
    expect(text).toMatch(/^Endpoint comparison: A = pcie \(3 run\(s\): 1, 2, 3\) vs B = c2c \(2 run\(s\): 4, 5\)$/m);
    expect(text).toContain(basis);
    expect(text).toMatch(/TTFT P50\s+ms\s+100\.0 \(n=3\)\s+60\.50 \(n=2\)\s+1\.653x\s+c2c\s+<0\.001/);
    const json = EndpointComparisonSchema.parse(JSON.parse(JSON.stringify(c)));
    expect(json.method).toContain(basis);
    expect(json).not.toHaveProperty('winRateA');
  });
});

describe('endpoint show: server metrics that may not be the run\'s share', () => {
  it('marks the values * and says why once per reason under the table, keeping the table narrow', () => {
    const shown = formatServerMetrics({
      serverMetrics: {
        pages: [{ url: 'http://trt:8000/metrics', format: 'trtllm-iteration-json', engines: ['trtllm'], error: null, notes: [] }],
        values: [
          { key: 'reused_blocks', source: 'trtllm-json:reusedBlocks', before: null, after: 75, delta: 75, reset: false, sinceServerStart: true },
          { key: 'missed_blocks', source: 'trtllm-json:missedBlocks', before: null, after: 25, delta: 25, reset: false, sinceServerStart: true },
          { key: 'offload_bytes', source: 'vllm:kv_offload_store_bytes', before: 0, after: 51_200, delta: 51_200, reset: false, sinceServerStart: false },
        ],
        derived: { block_reuse_rate: 0.75 },
        rawCounterDeltas: {},
      },
    } as unknown as EndpointRunRecord);
    const lines = shown.split('\n');
    const row = (label: string): string => lines.find((l) => l.trimStart().startsWith(label))!;
    expect(row('Reused KV blocks')).toMatch(/\s75 \*$/);
    expect(row('Missed KV blocks')).toMatch(/\s25 \*$/);
    expect(row('Offloaded bytes')).toMatch(/\s50\.0 KiB$/);
    expect(row('KV block reuse rate (run)')).toMatch(/\s75\.0% \*$/);
    const since = "totals since the server started (no baseline before the run): the run's own share only on a server started just for it";
    expect(lines.filter((l) => l.startsWith('    * '))).toEqual([
      `    * Reused KV blocks, Missed KV blocks: ${since}`,
      `    * KV block reuse rate (run): computed from Reused KV blocks and Missed KV blocks: ${since}`,
    ]);
    // The reasons are not in the table: its rows stay as wide as their values.
    const tableRows = lines.filter((l) => !l.startsWith('    * ') && /blocks|rate|bytes/.test(l) && !l.includes(BYTE_UNITS_NOTE));
    for (const l of tableRows) expect(l, l).not.toContain('since the server started');
  });
});
