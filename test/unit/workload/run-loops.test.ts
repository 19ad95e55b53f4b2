// Writers that run together must stop together: after one fails, none starts another step, and the
// failure reaches the caller only once every step in flight has finished (the caller then cleans up,
// and nothing may still be writing).
import { describe, expect, it } from 'vitest';
import { runConcurrently, runLoops } from '../../../src-main/engine/run-loops.ts';

const tick = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('runLoops', () => {
  it('runs every loop until its step says stop', async () => {
    let n = 0;
    await runLoops(4, async () => {
      if (n >= 40) return false;
      n++;
      await tick(1);
      return true;
    });
    expect(n).toBe(40);
  });

  it('after a failure starts no new step, and throws only once the steps in flight have finished', async () => {
    const events: string[] = [];
    let n = 0;
    let inFlight = 0;
    const done = runLoops(4, async () => {
      const i = n++;
      inFlight++;
      events.push(`start ${i}`);
      try {
        if (i === 5) {
          await tick(1);
          throw new Error('EEXIST: precond_5');
        }
        await tick(i === 6 ? 30 : 3); // step 6 is still writing when 5 fails
        return i < 1000;
      } finally {
        inFlight--;
        events.push(`end ${i}`);
      }
    });
    await expect(done).rejects.toThrow('EEXIST: precond_5');
    expect(inFlight, 'nothing still running when the failure is thrown').toBe(0);
    const failedAt = events.indexOf('end 5');
    expect(events.slice(failedAt).filter((e) => e.startsWith('start')), 'no step started after the failure').toEqual([]);
    expect(events).toContain('end 6');
  });

  it('keeps the first failure when several loops fail', async () => {
    let n = 0;
    await expect(
      runLoops(3, async () => {
        const i = n++;
        await tick(i);
        throw new Error(`failure ${i}`);
      }),
    ).rejects.toThrow('failure 0');
  });
});

describe('runConcurrently', () => {
  it('takes each item once, at most `limit` at a time', async () => {
    const seen: number[] = [];
    let running = 0;
    let peak = 0;
    await runConcurrently([...Array(20).keys()], 3, async (i) => {
      running++;
      peak = Math.max(peak, running);
      await tick(1);
      seen.push(i);
      running--;
    });
    expect(seen.sort((a, b) => a - b)).toEqual([...Array(20).keys()]);
    expect(peak).toBe(3);
  });
});
