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
const sample = (readP95Ms: number | null, writeP95Ms: number | null): AutoscalerSample => ({
  elapsedNs: ++n * 10e9,
  intervalNs: 10e9,
  generatedTokens: 1000,
  storageReadP95Ns: readP95Ms === null ? null : readP95Ms * 1e6,
  storageWriteP95Ns: writeP95Ms === null ? null : writeP95Ms * 1e6,
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
