// The wizard's and `kvbench hw`'s advice about the detected hardware, as people read it.
import { describe, expect, it } from 'vitest';
import { hardwareAdvice } from '../../../src-main/hardware/advice.ts';
import { fakeHardware } from '../store/fixtures.ts';

describe('hardware advice', () => {
  it('says how little space is free in a unit that shows it: never "0.0 GiB" beside a free space of 20 MiB', () => {
    const low = (freeBytes: number): string | undefined => {
      const hw = fakeHardware();
      hw.cacheDir = { ...hw.cacheDir!, freeBytes };
      return hardwareAdvice(hw, false).find((a) => a.code === 'low-space')?.message;
    };
    expect(low(20 * 1024 ** 2)).toBe('Only 20.0 MiB free in the cache directory: only the smoke profile or a small storage capacity will fit.');
    expect(low(3.5 * 1024 ** 3)).toMatch(/^Only 3\.50 GiB free/);
    expect(low(8 * 1024 ** 3)).toBeUndefined();
  });
});
