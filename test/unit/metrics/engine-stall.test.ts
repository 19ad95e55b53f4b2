import { describe, expect, it } from 'vitest';
import { ENGINE_STALL_NS, engineStallReason, engineStallThresholdNs } from '../../../src-shared/domain/engine-stall.ts';

describe('engineStallReason', () => {
  const plannedNs = 4e9;

  it('passes a window that closed on time with the lag a loaded machine shows', () => {
    // The worst of the normal runs measured for the threshold: 1.4 s lag, 45 ms late.
    expect(engineStallReason({ plannedNs, elapsedNs: plannedNs + 45e6, lagMaxNs: 1.43e9 })).toBeNull();
    expect(engineStallReason({ plannedNs, elapsedNs: plannedNs + ENGINE_STALL_NS - 1, lagMaxNs: ENGINE_STALL_NS - 1 })).toBeNull();
    // A window closed early (--max-requests, the workload's end) is no overrun.
    expect(engineStallReason({ plannedNs, elapsedNs: 1e9, lagMaxNs: null })).toBeNull();
  });

  it('lets a long window absorb a pause that is a small share of it (1 %), never less than 5 s', () => {
    const dayNs = 86_400e9;
    expect(engineStallThresholdNs(4e9)).toBe(ENGINE_STALL_NS);
    expect(engineStallThresholdNs(dayNs)).toBe(864e9);
    // A 10 s live migration in a 24 h run: no stall; 15 minutes of it: one.
    expect(engineStallReason({ plannedNs: dayNs, elapsedNs: dayNs + 10e9, lagMaxNs: 10e9 })).toBeNull();
    expect(engineStallReason({ plannedNs: dayNs, elapsedNs: dayNs + 900e9, lagMaxNs: null })).toMatch(/^the engine stalled \(the measured window closed 900\.0 s after/);
    expect(engineStallReason({ plannedNs: dayNs, elapsedNs: dayNs, lagMaxNs: 864e9 })).toMatch(/^the engine stalled \(its event loop was blocked for 864\.0 s/);
  });

  it('names a window that closed a stall late, and an event loop blocked that long', () => {
    expect(engineStallReason({ plannedNs, elapsedNs: 16.9e9, lagMaxNs: null })).toMatch(
      /^the engine stalled \(the measured window closed 12\.9 s after its planned 4\.0 s\): its process was stopped/,
    );
    // Stopped inside a window that then ran on to its end: the lag shows it, not the close.
    expect(engineStallReason({ plannedNs: 300e9, elapsedNs: 300.02e9, lagMaxNs: ENGINE_STALL_NS })).toMatch(
      /^the engine stalled \(its event loop was blocked for 5\.0 s at once\)/,
    );
    expect(engineStallReason({ plannedNs, elapsedNs: 49.7e9, lagMaxNs: 45.7e9 })).toMatch(
      /^the engine stalled \(its event loop was blocked for 45\.7 s at once, and the measured window closed 45\.7 s after its planned 4\.0 s\)/,
    );
  });
});
