import { describe, expect, it } from 'vitest';
import { RequestQueue } from '../../../src-main/engine/workload/request-queue.ts';
import type { KvRequest } from '../../../src-main/engine/workload/synthetic-workload.ts';
import { WorkerPool } from '../../../src-main/engine/workload/worker-pool.ts';

const req = (seq: number, over: Partial<KvRequest> = {}) =>
  ({ seq, priority: 1, arrivalNs: seq, cacheKey: `k${seq}`, conversationId: null, previousTurnKeys: [] as string[], ...over }) as KvRequest;

/** A pool whose requests finish when the test says so. */
function pausedPool() {
  const queue = new RequestQueue();
  const finish = new Map<number, () => void>();
  const served: number[] = [];
  const pool = new WorkerPool(async (r) => {
    served.push(r.seq);
    await new Promise<void>((resolve) => finish.set(r.seq, resolve));
  }, queue);
  return { queue, pool, finish, served };
}

describe('WorkerPool and RequestQueue: a request is always queued or in service', () => {
  it('counts a request busy the moment the queue hands it to a waiting worker, before the worker resumes', async () => {
    const { queue, pool, finish, served } = pausedPool();
    pool.resize(2);
    await Promise.resolve(); // both workers are waiting in take()
    queue.push(req(0));
    // The scheduler checks "nothing queued, nothing busy" synchronously after pushing: the request must
    // be visible to it here, or a replay's last request is dropped as if the run were over.
    expect(queue.depth).toBe(0);
    expect(pool.busy).toBe(1);
    await new Promise((r) => setImmediate(r));
    expect(served).toEqual([0]);
    finish.get(0)!();
    await new Promise((r) => setImmediate(r));
    expect(pool.busy).toBe(0);
    queue.close();
    await pool.drain();
  });

  it('counts a held conversation turn busy the moment its earlier turn releases it to a waiting worker', async () => {
    const { queue, pool, finish } = pausedPool();
    pool.resize(2);
    const t1 = req(0, { conversationId: 'c', turn: 1, cacheKey: 'c_turn_1' });
    const t2 = req(1, { conversationId: 'c', turn: 2, cacheKey: 'c_turn_2', previousTurnKeys: ['c_turn_1'] });
    queue.push(t1);
    queue.push(t2);
    await new Promise((r) => setImmediate(r));
    expect({ busy: pool.busy, queued: queue.depth }).toEqual({ busy: 1, queued: 1 });
    queue.release(t1);
    expect({ busy: pool.busy, queued: queue.depth }).toEqual({ busy: 2, queued: 0 });
    finish.get(0)!();
    await new Promise((r) => setImmediate(r));
    finish.get(1)!();
    queue.close();
    await pool.drain();
    expect(pool.busy).toBe(0);
  });

  it('counts a request taken from the queue busy at once', async () => {
    const { queue, pool, finish } = pausedPool();
    queue.push(req(0));
    queue.push(req(1));
    pool.resize(1);
    // The worker's take() ran synchronously inside resize.
    expect({ busy: pool.busy, queued: queue.depth }).toEqual({ busy: 1, queued: 1 });
    await new Promise((r) => setImmediate(r));
    finish.get(0)!();
    await new Promise((r) => setImmediate(r));
    expect({ busy: pool.busy, queued: queue.depth }).toEqual({ busy: 1, queued: 0 });
    finish.get(1)!();
    queue.close();
    await pool.drain();
  });
});
