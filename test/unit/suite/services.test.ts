import { describe, expect, it } from 'vitest';
import { chosenScenarioIds, planSuite } from '../../../src-main/suite/planner.ts';
import { planUsesGpu, scenariosUseGpu, suiteDetectOptions } from '../../../src-main/suite/services.ts';
import { fakeHardware } from '../store/fixtures.ts';

describe("a suite's hardware detection", () => {
  it('probes the GPU copy beside the drive and memory only for a suite with a GPU tier in it', () => {
    expect(suiteDetectOptions({ probe: true, profile: 'quick', gpuScenarios: true })).toMatchObject({ probeMemory: true, probeGpu: true });
    expect(suiteDetectOptions({ probe: true, profile: 'quick', gpuScenarios: false })).toMatchObject({ probeMemory: true, probeGpu: false });
    expect(suiteDetectOptions({ probe: false, profile: 'quick', gpuScenarios: true })).toMatchObject({ probeMemory: false, probeGpu: false });
    // Production and autoscale have a GPU tier too where there is a GPU; storage-only and CPU only do not.
    expect(scenariosUseGpu(chosenScenarioIds({ profile: 'quick', cacheDir: '/mnt/kv' }))).toBe(true);
    expect(scenariosUseGpu(['production'])).toBe(true);
    expect(scenariosUseGpu(['storage-only', 'cpu-only'])).toBe(false);
    // A resumed suite: its stored plan says.
    const gpu = planSuite(fakeHardware({ gpuGiB: 80 }), { profile: 'smoke', cacheDir: '/mnt/kv', scenarios: ['gpu-only', 'storage-only'] });
    const noGpu = planSuite(fakeHardware({ gpuGiB: null }), { profile: 'smoke', cacheDir: '/mnt/kv' });
    expect([planUsesGpu(gpu), planUsesGpu(noGpu)]).toEqual([true, false]);
  });
});
