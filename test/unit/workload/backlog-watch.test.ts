import { describe, expect, it } from 'vitest';
import { BacklogWatch, OPEN_LOOP_BACKLOG_CAP, backlogNote } from '../../../src-main/engine/workload/backlog-watch.ts';
import type { GenerationPace, WorkersBusyNs } from '../../../src-shared/domain/worker-busy.ts';

function watch(paced = true, cap?: number, traceOnly = false, generation: GenerationPace | null = null) {
  const logged: string[] = [];
  return { w: new BacklogWatch(paced, (_level, message) => void logged.push(message), cap, traceOnly, generation), logged };
}

/** The workers' busy time over `requests` completed requests, each spending these ms. */
const busyOf = (requests: number, ms: { gpu?: number; storage?: number; generation: number }): WorkersBusyNs => {
  const gpu = (ms.gpu ?? 0) * 1e6 * requests;
  const storage = (ms.storage ?? 0) * 1e6 * requests;
  const generationNs = ms.generation * 1e6 * requests;
  return { requests, totalNs: gpu + storage + generationNs, cacheIoNs: gpu + storage, cacheIoByTierNs: { gpu, cpu: 0, storage }, generationNs };
};
const realistic: GenerationPace = { mode: 'realistic', nsPerToken: 30e6 };

describe('BacklogWatch: an open loop that outgrows its workers measures queueing, and says so', () => {
  it('judges at the close, relative to the workers and to what was served: a 4-user run 238 deep is queueing-bound, a steady one is not', () => {
    // rev18's t2: 4 users, 273 issued, 31 completed, 238 queued at the close (queue wait P95 11.1 s of e2e P95 14.4 s).
    const small = watch();
    small.w.observe({ depth: 238, workers: 4, issued: 273, completed: 31, heldBack: false, busy: busyOf(31, { storage: 800, generation: 200 }) });
    small.w.close({ queued: 238, workers: 4, completed: 31 });
    expect(small.w.facts()).toMatchObject({ queueingBound: true, workersAtClose: 4 });
    expect(small.logged).toEqual([expect.stringContaining('the request queue has grown to 238 requests (273 issued, 31 completed): the configuration offers more load than the storage serves')]);
    // A steady run: a burst of 40 queued (10 per worker) at the close of a run that served 2,000.
    const steady = watch();
    steady.w.close({ queued: 40, workers: 4, completed: 2000 });
    expect(steady.w.facts().queueingBound).toBe(false);
    // Shallow for its workers: 500 workers, 4,000 queued of 1,000 served.
    const wide = watch();
    wide.w.close({ queued: 4000, workers: 500, completed: 1000 });
    expect(wide.w.facts().queueingBound).toBe(false);
  });

  it('says live once, when the queue first outgrows its workers, and does not keep the verdict if the queue drained by the close', () => {
    const { w, logged } = watch();
    w.observe({ depth: 39, workers: 4, issued: 60, completed: 10, heldBack: false });
    expect(logged).toEqual([]);
    w.observe({ depth: 40, workers: 4, issued: 61, completed: 10, heldBack: false });
    w.observe({ depth: 4462, workers: 4, issued: 5000, completed: 100, heldBack: false });
    expect(logged).toHaveLength(1);
    expect(logged[0]).toContain('the request queue has grown to 40 requests (61 issued, 10 completed)');
    w.close({ queued: 0, workers: 4, completed: 5000 });
    expect(w.facts()).toEqual({ capRequests: OPEN_LOOP_BACKLOG_CAP, capReached: false, queueingBound: false, workersAtClose: 4, issueLatenessMaxNs: 0, traceOnly: false, workersBusy: null, generation: null });
  });

  it('caps an open loop at OPEN_LOOP_BACKLOG_CAP and says once when arrivals are held back; an unpaced replay keeps 2 × workers', () => {
    const { w, logged } = watch(true, 20);
    expect(w.maxQueued(8)).toBe(20);
    w.observe({ depth: 20, workers: 8, issued: 40, completed: 2, heldBack: true });
    w.observe({ depth: 20, workers: 8, issued: 40, completed: 3, heldBack: true });
    expect(logged).toEqual([expect.stringContaining('the request queue reached its cap of 20 requests: further arrivals are held back and issued late, in order')]);
    w.issued(1e9, 3.5e9);
    w.issued(2e9, 2.5e9);
    expect(w.facts()).toEqual({ capRequests: 20, capReached: true, queueingBound: false, workersAtClose: null, issueLatenessMaxNs: 2.5e9, traceOnly: false, workersBusy: null, generation: null });

    const unpaced = watch(false);
    expect(unpaced.w.maxQueued(8)).toBe(16);
    unpaced.w.observe({ depth: 100_000, workers: 8, issued: 100_000, completed: 0, heldBack: true });
    unpaced.w.close({ queued: 100_000, workers: 8, completed: 0 });
    expect(unpaced.logged).toEqual([]);
    expect(unpaced.w.facts()).toMatchObject({ capRequests: null, capReached: false, queueingBound: false });
  });

  it('tells the live view the rule at the latest tick apart from where it was first met: a queue that drains is no longer queueing-bound now', () => {
    const { w, logged } = watch();
    w.observe({ depth: 39, workers: 4, issued: 100, completed: 60, heldBack: false });
    expect(w.live()).toEqual({ queueingNow: false, firstMet: null });
    w.observe({ depth: 45, workers: 4, issued: 120, completed: 70, heldBack: false });
    expect(w.live()).toEqual({ queueingNow: true, firstMet: { queuedRequests: 45, workers: 4 } });
    w.observe({ depth: 80, workers: 4, issued: 170, completed: 85, heldBack: false });
    expect(w.live()).toEqual({ queueingNow: true, firstMet: { queuedRequests: 45, workers: 4 } });
    // Drained: not queueing-bound now, though it was (the warning was given once, at the first tick).
    w.observe({ depth: 3, workers: 4, issued: 200, completed: 190, heldBack: false });
    expect(w.live()).toEqual({ queueingNow: false, firstMet: { queuedRequests: 45, workers: 4 } });
    expect(logged).toHaveLength(1);
    w.close({ queued: 3, workers: 4, completed: 190 });
    expect(w.facts().queueingBound).toBe(false);
    // A steady queue of 10 per worker behind many completions is not queueing-bound at any tick (the
    // engine passes the completions since the workload started, warm-up included, not the window's 0).
    const steady = watch();
    steady.w.observe({ depth: 40, workers: 4, issued: 5040, completed: 5000, heldBack: false });
    expect(steady.w.live()).toEqual({ queueingNow: false, firstMet: null });
    // An unpaced replay's bounded backlog never is.
    const unpaced = watch(false);
    unpaced.w.observe({ depth: 100, workers: 4, issued: 100, completed: 0, heldBack: true });
    expect(unpaced.w.live()).toEqual({ queueingNow: false, firstMet: null });
  });

  it('gives the results a note only for a queueing-bound run, counts grouped, and blames no storage in trace-only mode', () => {
    const quiet = {
      capRequests: OPEN_LOOP_BACKLOG_CAP,
      capReached: false,
      queueingBound: false,
      workersAtClose: 100,
      issueLatenessMaxNs: 0,
      traceOnly: false,
      workersBusy: busyOf(107, { storage: 900, generation: 100 }),
      generation: realistic,
    };
    expect(backlogNote(quiet, { maxDepth: 12, queuedAtClose: 3 }, 100, 90)).toBeNull();
    // The storage tier took the workers' time: the storage is blamed, as before, with the measured split.
    expect(backlogNote({ ...quiet, queueingBound: true }, { maxDepth: 4462, queuedAtClose: 4462 }, 4669, 107)).toBe(
      '4,462 requests were still queued at the close for 100 workers (4,669 issued, 107 completed; the queue reached 4,462): the configuration offers more load than the storage serves: ' +
        'the workers spent 90 % of the busy time of the 107 requests completed in the measured window in cache I/O (100 % of it in the storage tier) and 10 % in simulated generation (realistic, 30 ms/token), ' +
        'so end-to-end latency and queue wait measure queueing, not storage; storage bandwidth and per-operation latencies still describe the device',
    );
    const traceOnly = backlogNote({ ...quiet, queueingBound: true, workersAtClose: 500, traceOnly: true }, { maxDepth: 58420, queuedAtClose: 58397 }, 95880, 36983);
    expect(traceOnly).toBe(
      '58,397 requests were still queued at the close for 500 workers (95,880 issued, 36,983 completed; the queue reached 58,420): ' +
        'the configuration offers more load than the engine serves (trace-only mode: no storage I/O), so end-to-end latency and queue wait measure queueing, not the engine',
    );
    expect(backlogNote({ ...quiet, capRequests: 20, capReached: true, issueLatenessMaxNs: 2.5e9 }, { maxDepth: 20, queuedAtClose: 20 }, 60, 3)).toMatch(
      /; the backlog reached its cap of 20 and later arrivals were issued up to 2\.5 s behind schedule$/,
    );
    const live = watch(true, undefined, true);
    live.w.observe({ depth: 5000, workers: 500, issued: 6000, completed: 500, heldBack: false });
    expect(live.logged[0]).toContain('more load than the engine serves (trace-only mode: no storage I/O)');
    expect(live.logged[0]).not.toContain('storage bandwidth');
  });

  it("names the simulated generation, not the storage, when the workers spent most of their time in it (the H200 GPU-tier run: 96 % generation, the drive read nothing)", () => {
    const f = {
      capRequests: OPEN_LOOP_BACKLOG_CAP,
      capReached: false,
      queueingBound: true,
      workersAtClose: 32,
      issueLatenessMaxNs: 0,
      traceOnly: false,
      workersBusy: busyOf(163, { gpu: 159, generation: 3944 }),
      generation: realistic,
    };
    const note = backlogNote(f, { maxDepth: 2843, queuedAtClose: 2842 }, 3068, 163);
    expect(note).toBe(
      '2,842 requests were still queued at the close for 32 workers (3,068 issued, 163 completed; the queue reached 2,843): ' +
        'the workers spent 96 % of the busy time of the 163 requests completed in the measured window in simulated generation (realistic, 30 ms/token) and 4 % in cache I/O (100 % of it in the GPU tier): ' +
        'the generation time and the user count offer more load than the workers serve, so end-to-end latency and queue wait measure queueing, not the cache or the drive; ' +
        'storage bandwidth and per-operation latencies still describe the device; fewer users, a longer think time or a faster generation mode keep the queue short',
    );
    expect(note).not.toContain('than the storage serves');
    // Live, as the warning the run logged: the busy time of the requests completed so far (warm-up included).
    const live = watch(true, undefined, false, realistic);
    live.w.observe({ depth: 320, workers: 32, issued: 376, completed: 24, heldBack: false, busy: busyOf(24, { gpu: 150, generation: 3900 }) });
    expect(live.logged).toEqual([
      'the request queue has grown to 320 requests (376 issued, 24 completed): the workers spent 96 % of the busy time of the 24 requests completed so far in simulated generation (realistic, 30 ms/token) ' +
        'and 4 % in cache I/O (100 % of it in the GPU tier): the generation time and the user count offer more load than the workers serve, so end-to-end latency and queue wait measure queueing while it lasts, ' +
        'not the cache or the drive (storage bandwidth and per-operation latencies still describe the device); fewer users, a longer think time or a faster generation mode keep the queue short',
    ]);
    // The close keeps the window's busy time for the note.
    live.w.close({ queued: 2842, workers: 32, completed: 163, busy: f.workersBusy });
    expect(live.w.facts()).toMatchObject({ queueingBound: true, workersBusy: f.workersBusy, generation: realistic });
  });

  it('blames nothing it has not measured: no request completed yet (live), none in the window (the note)', () => {
    const live = watch(true, undefined, false, realistic);
    live.w.observe({ depth: 40, workers: 4, issued: 40, completed: 0, heldBack: false, busy: busyOf(0, { generation: 0 }) });
    expect(live.logged[0]).toContain(
      'the configuration offers more load than the workers serve (no request has completed yet, so what held them is not measured), so end-to-end latency and queue wait measure queueing while it lasts, not storage',
    );
    const f = { capRequests: OPEN_LOOP_BACKLOG_CAP, capReached: false, queueingBound: true, workersAtClose: 4, issueLatenessMaxNs: 0, traceOnly: false, workersBusy: busyOf(0, { generation: 0 }), generation: realistic };
    expect(backlogNote(f, { maxDepth: 40, queuedAtClose: 40 }, 44, 0)).toContain(
      'the configuration offers more load than the workers serve (no request completed in the measured window, so what held them is not measured)',
    );
  });
});
