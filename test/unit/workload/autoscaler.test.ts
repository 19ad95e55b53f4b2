import { describe, expect, it } from 'vitest';
import { Autoscaler, type AutoscalerSample } from '../../../src-main/engine/workload/autoscaler.ts';

function qos(targetSaturation: number): Autoscaler {
  return new Autoscaler({
    mode: 'qos',
    initialUsers: 100,
    targetSaturation,
    readLatencyThresholdMs: 200,
    minUsers: 1,
    maxUsers: 1000,
    scaleUpFactor: 1.2,
    scaleDownFactor: 0.8,
    consecutiveSamplesRequired: 2,
    now: () => new Date(0),
  });
}

let n = 0;
const ns = (ms: number | null): number | null => (ms === null ? null : ms * 1e6);
const sample = (readP95Ms: number | null, writeP95Ms: number | null, inFlight: { readMs?: number; writeMs?: number } = {}): AutoscalerSample => ({
  elapsedNs: ++n * 10e9,
  intervalNs: 10e9,
  generatedTokens: 1000,
  storageReadP95Ns: ns(readP95Ms),
  storageWriteP95Ns: ns(writeP95Ms),
  storageReadInFlightNs: ns(inFlight.readMs ?? null),
  storageWriteInFlightNs: ns(inFlight.writeMs ?? null),
});

describe('qos autoscaler', () => {
  it('scales down with a target near 1 when reads are far over the threshold (saturation is not capped at 1)', () => {
    const a = qos(0.95);
    for (let i = 0; i < 2; i++) a.step(sample(2000, 100));
    expect(a.users).toBe(80);
    // Every step is logged, the hold that waited for the second sample too.
    expect(a.events.map((e) => e.action)).toEqual(['hold', 'scale_down']);
    expect(a.events[1]).toMatchObject({ action: 'scale_down', saturation_level: 10, users: 80 });
  });

  it('judges an interval in which no read completed by its writes: slow storage is not idle storage', () => {
    const a = qos(0.8);
    for (let i = 0; i < 2; i++) a.step(sample(null, 30_000));
    expect(a.users).toBe(80);
  });

  it('judges an interval in which nothing completed by the operations still in flight: storage too slow to finish one is not idle', () => {
    const a = qos(0.8);
    // Trial 47 on a slow drive: 80 MB/s written, yet no read or write finished within an interval.
    for (let i = 0; i < 2; i++) a.step(sample(null, null, { readMs: 1500, writeMs: 900 }));
    expect(a.events.map((e) => e.action)).toEqual(['hold', 'scale_down']);
    expect(a.users).toBe(80);
    expect(a.events[1]).toMatchObject({ saturation_level: 7.5, read_latency_p95_ms: null, write_latency_p95_ms: null, read_in_flight_oldest_ms: 1500, write_in_flight_oldest_ms: 900 });
    // A write in flight for 1 s with no read in the interval: 1000 ÷ 500 ms, over the target.
    const b = qos(0.8);
    b.step(sample(null, null, { writeMs: 1000 }));
    expect(b.events[0]).toMatchObject({ action: 'hold', saturation_level: 2 });
    // In flight for less than the target: no proof of room, so it holds rather than adds users.
    const e = qos(0.8);
    e.step(sample(null, null, { writeMs: 100 }));
    expect(e.events[0]).toMatchObject({ action: 'hold', saturation_level: 0.2, users: 100 });
    // Completed writes are judged by their P95, a just-started read in flight does not hide them.
    const c = qos(0.8);
    c.step(sample(null, 1000, { readMs: 1 }));
    expect(c.events[0].saturation_level).toBe(2);
    // A read that completed decides, as before.
    const d = qos(0.8);
    d.step(sample(20, null, { readMs: 5000 }));
    expect(d.events[0]).toMatchObject({ action: 'scale_up', saturation_level: 0.1 });
  });

  it('says whether the latency target held in the last interval that measured it, or that none did', () => {
    const a = qos(0.8);
    a.step(sample(null, null));
    expect(a.targetJudgement).toBeNull(); // never measured
    a.step(sample(100, null));
    expect(a.targetJudgement).toMatchObject({ met: true, event: { read_latency_p95_ms: 100 } });
    a.step(sample(null, null, { readMs: 50 })); // in flight, under the threshold: proves nothing
    expect(a.targetJudgement?.event.read_latency_p95_ms).toBe(100);
    a.step(sample(null, null, { readMs: 700 })); // already past the threshold: not met
    expect(a.targetJudgement).toMatchObject({ met: false, event: { read_in_flight_oldest_ms: 700 } });
    a.step(sample(998.9, 751));
    expect(a.targetJudgement?.met).toBe(false);
    expect(a.targetJudgement?.event.saturation_level).toBeCloseTo(4.9945, 9);
  });

  it('adds users while the storage is idle or fast, and holds near the target', () => {
    const a = qos(0.8);
    a.step(sample(null, null));
    expect(a.users).toBe(120);
    a.step(sample(20, 50));
    expect(a.users).toBe(144);
    a.step(sample(160, 50)); // saturation 0.8: on target
    expect(a.users).toBe(144);
  });

  it('waits three intervals after scaling down', () => {
    const a = qos(0.8);
    for (let i = 0; i < 2; i++) a.step(sample(400, null));
    expect(a.users).toBe(80);
    for (let i = 0; i < 3; i++) a.step(sample(10, null));
    expect(a.users).toBe(80);
    a.step(sample(10, null));
    expect(a.users).toBe(96);
  });
});
