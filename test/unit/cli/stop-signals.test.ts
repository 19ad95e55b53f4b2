import { describe, expect, it } from 'vitest';
import { abandonsStop, REPEAT_IS_SAME_DELIVERY_MS, signalExitCode } from '../../../src-main/cli/stop-signals.ts';

describe('stop signals', () => {
  it('a repeated Ctrl-C or SIGTERM abandons the graceful stop, unless it is the same delivery arriving twice', () => {
    const first = 1_000_000;
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      expect(abandonsStop(signal, first, first + 50), `${signal} 50 ms later: a group stop's second copy`).toBe(false);
      expect(abandonsStop(signal, first, first + REPEAT_IS_SAME_DELIVERY_MS - 1)).toBe(false);
      expect(abandonsStop(signal, first, first + REPEAT_IS_SAME_DELIVERY_MS), `${signal} asked again`).toBe(true);
      expect(abandonsStop(signal), 'what the first stop tells the user').toBe(true);
    }
  });

  it('a hang-up never abandons it: nobody is left to ask twice', () => {
    expect(abandonsStop('SIGHUP')).toBe(false);
    expect(abandonsStop('SIGHUP', 0, 60_000)).toBe(false);
  });

  it('exits with the status a shell reports for the signal', () => {
    expect([signalExitCode('SIGHUP'), signalExitCode('SIGINT'), signalExitCode('SIGTERM')]).toEqual([129, 130, 143]);
  });
});
