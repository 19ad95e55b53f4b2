import { describe, expect, it } from 'vitest';
import { BacklogWatch, OPEN_LOOP_BACKLOG_CAP, backlogNote, queueingBoundDepth } from '../../../src-main/engine/workload/backlog-watch.ts';

function watch(paced = true, cap?: number) {
  const logged: string[] = [];
  return { w: new BacklogWatch(paced, (_level, message) => void logged.push(message), cap), logged };
}

describe('BacklogWatch: an open loop that outgrows its workers measures queueing, and says so', () => {
  it('says once, when the queue first reaches max(1000, 10 × workers), that latencies now measure queueing', () => {
    expect(queueingBoundDepth(10)).toBe(1000);
    expect(queueingBoundDepth(500)).toBe(5000);
    const { w, logged } = watch();
    w.observe({ depth: 999, workers: 10, issued: 1500, completed: 400, heldBack: false });
    expect(logged).toEqual([]);
    expect(w.facts().queueingBound).toBe(false);
    w.observe({ depth: 1000, workers: 10, issued: 1600, completed: 410, heldBack: false });
    w.observe({ depth: 5000, workers: 10, issued: 6000, completed: 500, heldBack: false });
    expect(logged).toHaveLength(1);
    expect(logged[0]).toContain('the request queue has grown to 1000 requests (1600 issued, 410 completed): the configuration offers more load than the storage serves');
    expect(logged[0]).toContain('measure queueing');
    expect(w.facts()).toEqual({ capRequests: OPEN_LOOP_BACKLOG_CAP, capReached: false, queueingBound: true, issueLatenessMaxNs: 0 });
  });

  it('caps an open loop at OPEN_LOOP_BACKLOG_CAP and says once when arrivals are held back; an unpaced replay keeps 2 × workers', () => {
    const { w, logged } = watch(true, 20);
    expect(w.maxQueued(8)).toBe(20);
    w.observe({ depth: 20, workers: 8, issued: 40, completed: 2, heldBack: true });
    w.observe({ depth: 20, workers: 8, issued: 40, completed: 3, heldBack: true });
    expect(logged).toEqual([expect.stringContaining('the request queue reached its cap of 20 requests: further arrivals are held back and issued late, in order')]);
    w.issued(1e9, 3.5e9);
    w.issued(2e9, 2.5e9);
    expect(w.facts()).toEqual({ capRequests: 20, capReached: true, queueingBound: false, issueLatenessMaxNs: 2.5e9 });

    const unpaced = watch(false);
    expect(unpaced.w.maxQueued(8)).toBe(16);
    unpaced.w.observe({ depth: 100_000, workers: 8, issued: 100_000, completed: 0, heldBack: true });
    expect(unpaced.logged).toEqual([]);
    expect(unpaced.w.facts()).toMatchObject({ capRequests: null, capReached: false, queueingBound: false });
  });

  it('gives the results a note only for a queueing-bound run', () => {
    const quiet = { capRequests: OPEN_LOOP_BACKLOG_CAP, capReached: false, queueingBound: false, issueLatenessMaxNs: 0 };
    expect(backlogNote(quiet, 12, 100, 90)).toBeNull();
    expect(backlogNote({ ...quiet, queueingBound: true }, 26960, 27835, 675)).toBe(
      'the queue grew to 26960 requests (27835 issued, 675 completed): the configuration offers more load than the storage serves, ' +
        'so end-to-end latency and queue wait measure queueing, not storage; storage bandwidth and per-operation latencies still describe the device',
    );
    expect(backlogNote({ ...quiet, capRequests: 20, capReached: true, issueLatenessMaxNs: 2.5e9 }, 20, 60, 3)).toMatch(
      /; the backlog reached its cap of 20 and later arrivals were issued up to 2\.5 s behind schedule$/,
    );
  });
});
