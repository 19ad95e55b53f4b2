// A stored trial's engine facts, from its results JSON to what its details show: the queueing verdict
// and issue lateness the CLI's summary gives, the engine's memory, and the memory chart in the units
// chosen in Settings. Results stored before kvbench recorded these read "—" and no chart, never zeros.
import { describe, expect, it } from 'vitest';
import { trialEngineOf, withStoredVerdict } from '../../../src-shared/domain/trial-engine.ts';
import { inAppWords } from '../../../src-renderer/app-words.ts';
import { engineMemoryText, issueLatenessText, memoryChart, queueingVerdictText } from '../../../src-renderer/trial-engine-view.ts';

const dec = { byteUnits: 'decimal' as const, latencyUnit: 'ms' as const };
const bin = { byteUnits: 'binary' as const, latencyUnit: 'ms' as const };
const MIB = 1024 ** 2;

/** The kvbench section of a results file, as 0.6.0 (and the first 0.7.0 builds) wrote it (no memory samples, no backlog facts). */
const before = (): Record<string, unknown> => ({
  kvbench: {
    queue: { max_depth: 37 },
    engine_health: { peak_rss_bytes: 3e9 },
    timeline: [{ elapsed_ns: 1e9, queue_depth: 3 }, { elapsed_ns: 2e9, queue_depth: 4 }],
  },
});
const point = (sec: number, rssMiB: number): Record<string, unknown> => ({
  elapsed_ns: sec * 1e9,
  rss_bytes: rssMiB * MIB,
  heap_used_bytes: 20 * MIB,
  external_bytes: 200 * MIB,
  array_buffers_bytes: 190 * MIB,
  byte_workers_heap_used_bytes: sec > 1 ? 8 * MIB : null,
});
const now = (queue: Record<string, unknown>, rssMiB: number[] = [400, 420, 410]): Record<string, unknown> => ({
  kvbench: {
    queue: { max_depth: 12, backlog_cap_requests: 500_000, backlog_cap_reached: false, queueing_bound: false, issue_lateness_max_ns: 0, note: null, ...queue },
    engine_health: {
      peak_rss_bytes: 3e9,
      memory: {
        sampled_peak: { rss_bytes: Math.max(...rssMiB) * MIB, heap_used_bytes: 0, external_bytes: 0, array_buffers_bytes: 0, byte_workers_heap_used_bytes: null },
        fixed_buffers: { cpu_tier_arena_bytes: 256 * MIB, storage_io_buffers_bytes: 32 * MIB, cpu_read_staging_bytes: 0, payload_pool_bytes: MIB, total_bytes: 289 * MIB },
      },
    },
    timeline: rssMiB.map((v, i) => point(i + 1, v)),
  },
});

describe("a stored trial's engine facts", () => {
  it('are unknown, not zeros, for results stored before kvbench recorded them (and for results without a kvbench section)', () => {
    for (const results of [before(), { requests_completed: 5 }, null]) {
      const e = trialEngineOf(results);
      expect(e).toEqual({ memoryTimeline: null, memory: null, queue: null });
      expect(queueingVerdictText(e, inAppWords)).toEqual({ text: expect.stringMatching(/^— \(not recorded/), bound: false });
      expect(issueLatenessText(e)).toBe('—');
      expect(engineMemoryText(e, dec)).toBe('—');
      expect(memoryChart(e, dec)).toBeNull();
    }
    expect(queueingVerdictText(null, inAppWords).text).toMatch(/^— /);
  });

  it("give the CLI summary's Queueing-bound verdict in the app's words, and how late arrivals were issued", () => {
    const note = 'the queue grew to 12 requests (23 issued, 7 completed): the configuration offers more load than the storage serves; the backlog reached its cap of 12 and later arrivals were issued up to 3.7 s behind schedule';
    const e = trialEngineOf(now({ max_depth: 12, backlog_cap_requests: 12, backlog_cap_reached: true, queueing_bound: true, issue_lateness_max_ns: 3.7e9, note }));
    expect(e.queue).toEqual({ queueingBound: true, engineQueueingBound: true, note, issueLatenessMaxNs: 3.7e9, maxDepth: 12, queuedAtClose: null, requestsCompleted: null, capRequests: 12, capReached: true });
    expect(queueingVerdictText(e, inAppWords)).toEqual({ text: `Queueing-bound: ${note}`, bound: true });
    expect(issueLatenessText(e)).toBe('3.7 s at most behind schedule: the queue reached its cap of 12 requests, and later arrivals waited to be issued');
    // A flag the note names reads as the app's control.
    expect(queueingVerdictText(trialEngineOf(now({ queueing_bound: true, note: 'fewer --num-users keep it short' })), inAppWords).text).not.toContain('--num-users');
  });

  it('say a run that did not queue so, with its deepest queue', () => {
    const e = trialEngineOf(now({ max_depth: 37 }));
    expect(queueingVerdictText(e, inAppWords)).toEqual({
      text: "No: not queueing-bound at the window's close (the queue reached at most 37 requests); its latencies describe the storage, not a queue",
      bound: false,
    });
    expect(issueLatenessText(e)).toBe('0 ms at most behind schedule');
  });

  it("give the stored trial's verdict (the flag history and the report use), the engine's own said apart where they differ (rev18 M1)", () => {
    // kvbench 0.7.0's file: 238 queued for 4 workers at the close, 31 completed; its own rule (1,000 queued) said no, today's says yes.
    const old: Record<string, unknown> = { ...now({ max_depth: 238 }), requests_completed: 31 };
    (old.kvbench as Record<string, unknown>).measured_window = { requests_queued_at_close: 238 };
    const e = trialEngineOf(old);
    expect(e.queue).toMatchObject({ queueingBound: false, engineQueueingBound: false, queuedAtClose: 238, requestsCompleted: 31 });
    const flagged = withStoredVerdict(e, { queueing_bound: 1, requests_queued_at_close: 238 });
    expect(flagged.queue).toMatchObject({ queueingBound: true, engineQueueingBound: false });
    const v = queueingVerdictText(flagged, inAppWords);
    expect(v.bound).toBe(true);
    expect(v.text).toMatch(/^Queueing-bound at the window's close \(238 requests still queued, 31 completed\) by this kvbench's rule/);
    expect(v.text).toContain('did not call it queueing-bound (an older rule)');
    expect(v.text).not.toMatch(/^No/);
    // The other way round: the engine's older rule said yes, the stored trial is not flagged.
    const said = trialEngineOf(now({ max_depth: 1200, queueing_bound: true, note: 'the queue grew to 1200 requests' }));
    const notFlagged = queueingVerdictText(withStoredVerdict(said, { queueing_bound: 0 }), inAppWords);
    expect(notFlagged).toEqual({ text: expect.stringMatching(/^No, by this kvbench's rule at the window's close; the kvbench that measured it called it queueing-bound by an older rule: the queue grew/), bound: false });
    // A 0.8.0 run whose backlog reached its cap but was not queueing-bound at the close: its note is the cap's, not a verdict.
    const capped = trialEngineOf(now({ max_depth: 12, backlog_cap_requests: 12, backlog_cap_reached: true, note: '12 requests were still queued at the close …; the backlog reached its cap of 12' }));
    expect(queueingVerdictText(withStoredVerdict(capped, { queueing_bound: 0 }), inAppWords)).toEqual({
      text: "Not queueing-bound at the window's close, but its backlog reached its cap of 12 requests: later arrivals were issued late (see Issue lateness)",
      bound: false,
    });
    // No stored metric (a trial the store has not judged): the results' own verdict stands.
    expect(withStoredVerdict(e, {})).toBe(e);
  });

  it('chart the memory in bytes converted only for the axis, MiB in binary units and MB in decimal, with the byte workers where measured', () => {
    const e = trialEngineOf(now({}));
    expect(e.memoryTimeline!.rssBytes).toEqual([400 * MIB, 420 * MIB, 410 * MIB]);
    const b = memoryChart(e, bin)!;
    expect(b.unit).toBe('MiB');
    expect(b.x).toEqual([1, 2, 3]);
    expect(b.series.map((s) => s.label)).toEqual(['RSS (MiB)', 'JS heap in use (MiB)', 'Array buffers (MiB)', "Byte workers' heaps (MiB)"]);
    expect(b.series[0]!.data).toEqual([400, 420, 410]);
    expect(b.series[3]!.data).toEqual([null, 8, 8]);
    const d = memoryChart(e, dec)!;
    expect(d.unit).toBe('MB');
    expect(d.series[0]!.data[0]).toBeCloseTo((400 * MIB) / 1e6, 9);
    expect(engineMemoryText(e, bin)).toBe('peak RSS 420 MiB (sampled each second); buffers reserved 289 MiB (CPU tier arena 256 MiB, storage I/O 32.0 MiB)');
    expect(engineMemoryText(e, dec)).toMatch(/^peak RSS 440 MB /);
  });

  it("thin a long trial's samples for drawing without losing a peak", () => {
    const rss = Array.from({ length: 10_000 }, (_, i) => (i === 4321 ? 900 : 400));
    const e = trialEngineOf(now({}, rss), 3000);
    const t = e.memoryTimeline!;
    expect(t.samples).toBe(10_000);
    expect(t.elapsedNs.length).toBeLessThanOrEqual(3000);
    expect(Math.max(...t.rssBytes.map((v) => v ?? 0))).toBe(900 * MIB);
    expect(t.elapsedNs).toContain(4322e9);
    expect(memoryChart(e, bin)!.thinned).toBe(true);
    expect(memoryChart(trialEngineOf(now({})), bin)!.thinned).toBe(false);
  });
});
