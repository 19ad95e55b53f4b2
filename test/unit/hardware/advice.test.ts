// The wizard's and `kvbench hw`'s advice about the detected hardware, as people read it.
import { describe, expect, it } from 'vitest';
import { hardwareAdvice } from '../../../src-main/hardware/advice.ts';
import { planSuite } from '../../../src-main/suite/planner.ts';
import { PROFILE_IDS } from '../../../src-shared/domain/scenarios.ts';
import { fakeHardware } from '../store/fixtures.ts';

const GIB = 1024 ** 3;
const withFree = (freeBytes: number): ReturnType<typeof fakeHardware> => {
  const hw = fakeHardware();
  hw.cacheDir = { ...hw.cacheDir!, freeBytes };
  return hw;
};
const low = (freeBytes: number): string | undefined => hardwareAdvice(withFree(freeBytes), false).find((a) => a.code === 'low-space')?.message;

describe('hardware advice', () => {
  it('says how little space is free in a unit that shows it: never "0.0 GiB" beside a free space of 20 MiB', () => {
    expect(low(20 * 1024 ** 2)).toMatch(/^Only 20\.0 MiB free in the cache directory: /);
    expect(low(3.5 * GIB)).toMatch(/^Only 3\.50 GiB free/);
  });

  it("names the profiles that fit from the planner's own needs: smoke needs 2 GiB (two 586 MiB entries of tiny-1b), quick 16, standard 64, mlperf 16.1", () => {
    // The review's case: 264 MB free, where the Plan step refuses smoke.
    expect(low(264e6)).toBe(
      'Only 252 MiB free in the cache directory: no profile fits (smoke, the smallest, needs 2.00 GiB). Nor would a smaller storage tier capacity: one KV entry of tiny-1b is 586 MiB.',
    );
    expect(low(1.5 * GIB)).toBe(
      'Only 1.50 GiB free in the cache directory: no profile fits (smoke, the smallest, needs 2.00 GiB). The smoke profile fits with a smaller --storage-capacity-gb: from 0.58 GiB (one KV entry of tiny-1b) up to the free space.',
    );
    expect(low(3.5 * GIB)).toBe('Only 3.50 GiB free in the cache directory: only the smoke profile fits (quick needs 16.0 GiB, standard 64.0 GiB, mlperf 16.1 GiB).');
    expect(low(20 * GIB)).toBe('Only 20.0 GiB free in the cache directory: only the smoke, quick and mlperf profiles fit (standard needs 64.0 GiB).');
    expect(low(80 * GIB)).toBeUndefined();
  });

  it('agrees with the planner: a profile the warning says fits is not refused for space, and one it leaves out is', () => {
    for (const freeBytes of [264e6, 1.5 * GIB, 2 * GIB, 3.5 * GIB, 16 * GIB, 20 * GIB, 63 * GIB, 64 * GIB, 80 * GIB]) {
      const hw = withFree(freeBytes);
      const warning = hardwareAdvice(hw, false).find((a) => a.code === 'low-space')?.message ?? '';
      const fitsSaid = /no profile fits/.test(warning) ? [] : warning === '' ? [...PROFILE_IDS] : PROFILE_IDS.filter((p) => new RegExp(`only the [^(]*\\b${p}\\b`).test(warning));
      for (const profile of PROFILE_IDS) {
        const plan = planSuite(hw, { profile, cacheDir: hw.cacheDir!.path, engineHasGpuTier: false });
        const refusedForSpace = plan.estimate.problems.some((p) => p.includes('cannot hold this suite'));
        expect({ freeBytes, profile, fitsSaid: fitsSaid.includes(profile) }).toEqual({ freeBytes, profile, fitsSaid: !refusedForSpace });
      }
    }
  });
});
