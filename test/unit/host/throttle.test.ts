import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createThrottle } from '../../../src-main/host/throttle.ts';

describe('createThrottle', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('emits the first value at once, then the latest at most once per interval', () => {
    const emitted: number[] = [];
    const throttle = createThrottle<number>((v) => emitted.push(v), 100);
    throttle.push(1);
    expect(emitted).toEqual([1]);
    for (let v = 2; v <= 10; v += 1) {
      vi.advanceTimersByTime(10);
      throttle.push(v);
    }
    expect(emitted).toEqual([1]);
    vi.advanceTimersByTime(10);
    expect(emitted).toEqual([1, 10]); // trailing edge at 100 ms carried the latest
    vi.advanceTimersByTime(500);
    expect(emitted).toEqual([1, 10]);
    throttle.push(11); // quiet for longer than the interval: leading edge again
    expect(emitted).toEqual([1, 10, 11]);
  });

  it('flush() emits the pending value now, and only once', () => {
    const emitted: number[] = [];
    const throttle = createThrottle<number>((v) => emitted.push(v), 100);
    throttle.push(1);
    throttle.push(2);
    throttle.flush();
    expect(emitted).toEqual([1, 2]);
    vi.advanceTimersByTime(1_000);
    throttle.flush();
    expect(emitted).toEqual([1, 2]);
  });

  it('cancel() drops the pending value', () => {
    const emitted: number[] = [];
    const throttle = createThrottle<number>((v) => emitted.push(v), 100);
    throttle.push(1);
    throttle.push(2);
    throttle.cancel();
    vi.advanceTimersByTime(1_000);
    expect(emitted).toEqual([1]);
  });
});
