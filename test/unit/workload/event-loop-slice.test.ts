// Trace-only mode's tiers complete every operation at once, so a backlog of requests is served as one
// chain of microtasks. These tests check that timers (the window's deadline, the scheduler, the engine's
// heartbeat) still run while such a backlog is served. Nothing here asserts a duration: each request
// spins at least 1 ms only so that a slice is sure to run out before the backlog does.
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MultiTierCache } from '../../../src-main/engine/cache/multi-tier-cache.ts';
import { EventLoopSlice, withEventLoopTurns } from '../../../src-main/engine/workload/event-loop-slice.ts';
import { RequestQueue } from '../../../src-main/engine/workload/request-queue.ts';
import type { KvRequest } from '../../../src-main/engine/workload/synthetic-workload.ts';
import { IoTraceLog } from '../../../src-main/engine/workload/trace/io-trace-log.ts';
import { NullTier } from '../../../src-main/engine/workload/trace/null-tier.ts';
import { WorkerPool } from '../../../src-main/engine/workload/worker-pool.ts';
import { removeTempDirs, tempDir } from '../sources/helpers.ts';

afterEach(removeTempDirs);

const REQUESTS = 60;

function spinMs(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

describe('trace-only tiers under a backlog', () => {
  it('let a timer run before the backlog is served, as benchmark.ts builds them (room in the log, turns for the event loop)', async () => {
    const log = await IoTraceLog.open(path.join(tempDir(), 'trace.csv'));
    const room = { waitForRoom: withEventLoopTurns(() => log.waitForRoom()) };
    const cache = new MultiTierCache(
      [
        { backend: new NullTier('cpu', room), budgetBytes: 4000 },
        { backend: new NullTier('storage', room), budgetBytes: 1 << 30 },
      ],
      { observer: log },
    );
    const queue = new RequestQueue();
    let served = 0;
    const pool = new WorkerPool(async (req) => {
      spinMs(1); // the cache's and the processor's own work, which a request costs even without I/O
      await cache.write({ key: req.cacheKey, keyHash: BigInt(req.seq), sizeBytes: 1000 }, async () => undefined);
      await cache.read(req.cacheKey, 'user');
      served++;
    }, queue);
    for (let seq = 0; seq < REQUESTS; seq++) {
      queue.push({ seq, priority: 1, arrivalNs: seq, cacheKey: `k${seq}`, conversationId: null, previousTurnKeys: [] as string[] } as KvRequest);
    }
    let servedWhenTimerRan: number | null = null;
    setTimeout(() => (servedWhenTimerRan = served), 0);
    pool.resize(4);
    while (served < REQUESTS) await new Promise((r) => setImmediate(r));
    queue.close();
    await pool.drain();
    await log.close();
    // Without the turns, the whole backlog is one microtask chain: the timer runs only after it (60).
    expect(servedWhenTimerRan).not.toBeNull();
    expect(servedWhenTimerRan!).toBeLessThan(REQUESTS);
  });

  it('shares one pause among everyone who asks while it is pending, and none while the slice lasts', async () => {
    // The slice's clock is set by hand: on a loaded machine 20 ms can pass between any two lines, so
    // the real clock would decide this test, not the slice's rule.
    let nowMs = 1000;
    const clock = vi.spyOn(performance, 'now').mockImplementation(() => nowMs);
    try {
      const slice = new EventLoopSlice(20);
      nowMs += 19.9;
      expect(slice.pauseIfDue()).toBeNull();
      nowMs += 0.1;
      const pause = slice.pauseIfDue();
      expect(pause).not.toBeNull();
      nowMs += 100;
      expect(slice.pauseIfDue()).toBe(pause);
      await pause;
      expect(slice.pauseIfDue()).toBeNull(); // a new slice began when the pause ended
      nowMs += 19.9;
      expect(slice.pauseIfDue()).toBeNull();
      nowMs += 0.1;
      expect(slice.pauseIfDue()).not.toBeNull();
    } finally {
      clock.mockRestore();
    }
  });
  it('begins a new slice whenever the event loop turns by itself (code waiting on real I/O), so such code is never paused', async () => {
    let nowMs = 1000;
    const clock = vi.spyOn(performance, 'now').mockImplementation(() => nowMs);
    try {
      const slice = new EventLoopSlice(20);
      // 75 ms of steps 15 ms apart, the loop turning between them as it does for I/O: never 20 ms without a turn.
      for (let step = 0; step < 5; step++) {
        expect(slice.pauseIfDue()).toBeNull();
        await new Promise((resolve) => setImmediate(resolve));
        nowMs += 15;
      }
      expect(slice.pauseIfDue()).toBeNull();
      // 20 ms since the last turn, none meanwhile: the pause.
      nowMs += 5;
      expect(slice.pauseIfDue()).not.toBeNull();
    } finally {
      clock.mockRestore();
    }
  });
});
