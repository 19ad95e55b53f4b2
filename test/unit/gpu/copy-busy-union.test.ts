import { describe, expect, it } from 'vitest';
import { CopyBusyUnion, type CopyInterval } from '../../../src-main/engine/tiers/gpu/copy-busy-union.ts';

const ms = (x: number): bigint => BigInt(Math.round(x * 1e6));
const span = (a: number, b: number): CopyInterval => ({ startNs: ms(a), endNs: ms(b) });

/** The union's length by brute force: every millisecond tick covered by some interval. */
function unionMs(spans: [number, number][]): number {
  let covered = 0;
  const end = Math.max(0, ...spans.map(([, b]) => b));
  for (let t = 0; t < end; t++) if (spans.some(([a, b]) => a <= t && t < b)) covered++;
  return covered;
}

describe('CopyBusyUnion', () => {
  it('is the union of the copies’ own intervals, not of hand-off to reply', () => {
    const u = new CopyBusyUnion();
    // Two copies handed off together; one thread runs the first over [0, 10], the second waited
    // behind an other-direction copy and ran over [30, 40].
    const a = u.handOff(ms(0));
    const b = u.handOff(ms(0));
    u.settle(a, span(0, 10));
    u.settle(b, span(30, 40));
    expect(u.busyNs()).toBe(20e6);
  });

  it('merges intervals reported out of order, overlapping or not, while earlier copies are still pending', () => {
    const u = new CopyBusyUnion();
    const first = u.handOff(ms(0));
    const second = u.handOff(ms(1));
    const third = u.handOff(ms(2));
    // The later ones report first; the earliest copy, still pending, may start before them.
    u.settle(third, span(12, 20));
    u.settle(second, span(5, 14));
    expect(u.busyNs()).toBe(15e6); // [5, 20] so far
    u.settle(first, span(0, 3));
    expect(u.busyNs()).toBe(18e6); // [0, 3] ∪ [5, 20]
    const fourth = u.handOff(ms(20));
    u.settle(fourth, span(19, 25)); // touches the open segment's end: extends it
    expect(u.busyNs()).toBe(23e6);
  });

  it('agrees with a brute-force union over many random copies on two threads, replies in any order', () => {
    let seed = 7;
    const rnd = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    // Copies handed off over time to two FIFO threads; each reply comes back some time after its
    // copy ended, so replies overtake one another. The events replay in time order.
    const threadFree = [0, 0];
    const events: { at: number; kind: 0 | 1; copy: number }[] = [];
    const spans: [number, number][] = [];
    let now = 0;
    for (let i = 0; i < 400; i++) {
      now += Math.floor(rnd() * 6);
      const thread = Math.floor(rnd() * 2);
      const start = Math.max(now, threadFree[thread]) + Math.floor(rnd() * 3);
      const end = start + 1 + Math.floor(rnd() * 8);
      threadFree[thread] = end;
      spans.push([start, end]);
      events.push({ at: now, kind: 0, copy: i }, { at: end + Math.floor(rnd() * 12), kind: 1, copy: i });
    }
    events.sort((x, y) => x.at - y.at || x.kind - y.kind);
    const u = new CopyBusyUnion();
    const tokens = new Map<number, number>();
    for (const e of events) {
      if (e.kind === 0) tokens.set(e.copy, u.handOff(ms(e.at)));
      else u.settle(tokens.get(e.copy)!, span(...spans[e.copy]));
    }
    expect(u.busyNs()).toBe(unionMs(spans) * 1e6);
    expect(u.busyNs()).toBeLessThan(spans.reduce((n, [a, b]) => n + b - a, 0) * 1e6); // they did overlap
  });

  it('counts from a reset only: earlier time goes, copies across it count from it', () => {
    const u = new CopyBusyUnion();
    const a = u.handOff(ms(0));
    u.settle(a, span(0, 10));
    const b = u.handOff(ms(8));
    u.reset(ms(10));
    expect(u.busyNs()).toBe(0);
    u.settle(b, span(8, 15)); // straddles the reset: [10, 15] counts
    const c = u.handOff(ms(20));
    u.settle(c, span(20, 22));
    expect(u.busyNs()).toBe(7e6);
  });

  it('ignores failed copies', () => {
    const u = new CopyBusyUnion();
    const a = u.handOff(ms(0));
    const b = u.handOff(ms(0));
    u.settle(a, null);
    u.settle(b, span(1, 2));
    expect(u.busyNs()).toBe(1e6);
  });
});
