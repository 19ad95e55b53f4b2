import { describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ENGINE_OVERHEAD_S, PROBE_OVERHEAD_S, planOptionErrors, plannedGpuTierGiB, planSuite } from '../../../src-main/suite/planner.ts';
import { DEFAULT_GPU_HEADROOM } from '../../../src-main/engine/tiers/gpu/gpu-tier.ts';
import { AUTO_CAPACITY_SHARE } from '../../../src-main/engine/tiers/storage-target.ts';
import { GIB } from '../../../src-shared/domain/results.ts';
import { validateRunOptions } from '../../../src-shared/domain/run-options.ts';
import { SuitePlanSchema } from '../../../src-shared/domain/scenarios.ts';
import { configKey, describeConfig } from '../../../src-main/store/results-ingest.ts';
import { fakeHardware } from '../store/fixtures.ts';
import { LOW_SPACE_PROBLEM } from '../renderer/fixtures.ts';

const opts = (o: Record<string, unknown>) => o as Record<string, number | string | boolean>;

describe('planSuite', () => {
  it('without a GPU: the six non-GPU scenarios run, the three GPU ones are skipped with the reason', () => {
    const plan = planSuite(fakeHardware({ gpuGiB: null }), { profile: 'standard', cacheDir: '/mnt/kv' });
    expect(SuitePlanSchema.parse(plan)).toEqual(plan);
    expect(plan.runs.map((r) => r.scenarioId)).toEqual(['cpu-only', 'storage-only', 'cpu-storage', 'storage-saturation', 'production', 'autoscale']);
    expect(plan.skipped).toEqual([
      { scenarioId: 'gpu-only', label: 'GPU only', reason: 'no GPU detected' },
      { scenarioId: 'gpu-cpu', label: 'GPU + CPU', reason: 'no GPU detected' },
      { scenarioId: 'gpu-cpu-storage', label: 'GPU + CPU + storage', reason: 'no GPU detected' },
    ]);
  });

  it('records the probe choice, for a resume to make the same one; a plan without it (older ones) stays valid', () => {
    for (const probe of [true, false]) {
      const plan = planSuite(fakeHardware({ gpuGiB: null }), { profile: 'smoke', cacheDir: '/mnt/kv', probe });
      expect(SuitePlanSchema.parse(JSON.parse(JSON.stringify(plan))).probe).toBe(probe);
    }
    const older = planSuite(fakeHardware({ gpuGiB: null }), { profile: 'smoke', cacheDir: '/mnt/kv' });
    expect('probe' in older).toBe(false);
    expect(SuitePlanSchema.safeParse(older).success).toBe(true);
  });

  it("derives the wrapper's parameters from RAM and the first GPU", () => {
    const plan = planSuite(fakeHardware({ ramGiB: 256, gpuGiB: 80 }), { profile: 'standard', cacheDir: '/mnt/kv' });
    const by = Object.fromEntries(plan.runs.map((r) => [r.scenarioId, opts(r.options)]));
    expect(plan.runs).toHaveLength(9);
    expect(by['gpu-only']).toMatchObject({ gpuMemGb: 77, cpuMemGb: 4, numUsers: 50 });
    expect(by['cpu-only']).toMatchObject({ gpuMemGb: 0, cpuMemGb: 128, numUsers: 50 });
    expect(by['gpu-cpu']).toMatchObject({ gpuMemGb: 77, cpuMemGb: 128, numUsers: 50 });
    expect(by['cpu-storage']).toMatchObject({ gpuMemGb: 0, cpuMemGb: 32, numUsers: 300 }); // 256 × 10 clamped to 300
    expect(by['gpu-cpu-storage']).toMatchObject({ gpuMemGb: 77, cpuMemGb: 32, numUsers: 300 });
    expect(by['storage-saturation']).toMatchObject({ gpuMemGb: 0, cpuMemGb: 32, numUsers: 300 });
    expect(by.production).toMatchObject({ gpuMemGb: 77, cpuMemGb: 128, numUsers: 50 });
    expect(by.autoscale).toMatchObject({ numUsers: 20, cpuMemGb: 32, enableAutoscaling: true, autoscalerMode: 'qos' });
    expect(by['storage-only']).toMatchObject({ gpuMemGb: 0, cpuMemGb: 0.5 });
    for (const r of plan.runs) {
      expect(r.options).toMatchObject({ model: 'llama3.1-8b', duration: 180, generationMode: 'realistic', seed: 42, cacheDir: '/mnt/kv' });
      expect(validateRunOptions(r.options).ok).toBe(true);
      expect(r.uvThreadpoolSize).toBe(Number(r.options.ioDepth) + 4);
      expect(r.trials).toBe(3);
    }
  });

  it('clamps high users to 50 on a small machine', () => {
    const plan = planSuite(fakeHardware({ ramGiB: 4 }), { profile: 'quick', cacheDir: '/mnt/kv' });
    const cs = plan.runs.find((r) => r.scenarioId === 'cpu-storage')!;
    expect(cs.options).toMatchObject({ numUsers: 50, cpuMemGb: 1, duration: 30 });
  });

  it('a GPU the engine cannot use (no NVIDIA driver) is reported, not silently ignored', () => {
    const plan = planSuite(fakeHardware({ gpuGiB: 80, gpuUsable: false }), { profile: 'standard', cacheDir: '/mnt/kv' });
    expect(plan.skipped.map((s) => s.scenarioId)).toEqual(['gpu-only', 'gpu-cpu', 'gpu-cpu-storage']);
    expect(plan.skipped[0].reason).toBe('the GPU tier cannot use NVIDIA H100, 80 GiB: libcuda.so.1 could not be loaded: no NVIDIA driver is installed');
    expect(plan.runs.find((r) => r.scenarioId === 'production')!.options.gpuMemGb).toBe(0);
    const off = planSuite(fakeHardware({ gpuGiB: 80 }), { profile: 'standard', cacheDir: '/mnt/kv', engineHasGpuTier: false });
    expect(off.skipped[0].reason).toMatch(/has no GPU tier \(detected NVIDIA H100, 80 GiB\)/);
  });

  it('plans the GPU tier from the memory the tier can reserve, so no trial is "smaller than asked" (139 GiB H200: 136 GiB)', () => {
    // H200: cuDeviceTotalMem 143771 MiB; the tier leaves max(1 GiB, 2 %) = 2875 MiB free, and the driver's context takes some.
    const h200 = 143771 * 1024 * 1024;
    expect(plannedGpuTierGiB(h200)).toBe(136);
    const freeAtOpen = h200 - 600 * 1024 * 1024; // after the primary context (about 0.5 GiB)
    const cap = freeAtOpen - Math.max(DEFAULT_GPU_HEADROOM.minBytes, DEFAULT_GPU_HEADROOM.fractionOfTotal * h200);
    expect(plannedGpuTierGiB(h200) * GIB).toBeLessThanOrEqual(cap);
    const quick = planSuite(fakeHardware({ gpuGiB: h200 / GIB }), { profile: 'quick', cacheDir: '/mnt/kv' });
    for (const id of ['gpu-only', 'gpu-cpu', 'gpu-cpu-storage'] as const) {
      const run = quick.runs.find((r) => r.scenarioId === id)!;
      expect(run.options.gpuMemGb, id).toBe(136);
      // The numbers, not only the rule: 143771 MiB = 140.40 GiB, 2 % of it = 2.81 GiB.
      expect(run.derivation).toContain("GPU tier 136 GiB (first GPU's memory less what the tier leaves to the driver: 140.40 GiB − 2.81 GiB headroom (max(1 GiB, 2 %)) − 1 GiB for the driver's context = 136.59 GiB, rounded down)");
    }
    expect(plannedGpuTierGiB(80 * GIB)).toBe(77); // H100: floor(80 − 1.6 − 1)
    expect(plannedGpuTierGiB(2 * GIB)).toBe(1); // small cards keep 1 GiB
    expect(plannedGpuTierGiB(0.5 * GIB)).toBe(0);
  });

  it('a usable GPU with under 1 GiB of memory gets no GPU scenarios, rather than GPU scenarios without a GPU tier', () => {
    for (const profile of ['smoke', 'standard'] as const) {
      const plan = planSuite(fakeHardware({ gpuGiB: 0.5 }), { profile, cacheDir: '/mnt/kv' });
      expect(plan.skipped.map((s) => s.scenarioId)).toEqual(['gpu-only', 'gpu-cpu', 'gpu-cpu-storage']);
      expect(plan.skipped[0].reason).toMatch(/^NVIDIA H100, 0.5 GiB has under 1 GiB of memory: /);
      for (const r of plan.runs) expect(r.options.gpuMemGb, r.scenarioId).toBe(0);
    }
    const oneGiB = planSuite(fakeHardware({ gpuGiB: 1 }), { profile: 'smoke', cacheDir: '/mnt/kv' });
    expect(oneGiB.skipped).toEqual([]);
    expect(oneGiB.runs.find((r) => r.scenarioId === 'gpu-only')!.options.gpuMemGb).toBe(1);
  });

  it('MLPerf: the three reference options, 300 s × 3 trials, no generation, automatic capacity', () => {
    const plan = planSuite(fakeHardware(), { profile: 'mlperf', cacheDir: '/mnt/kv' });
    expect(plan.runs.map((r) => [r.scenarioId, r.trials, opts(r.options)])).toEqual([
      ['mlperf-storage-stress', 3, expect.objectContaining({ model: 'llama3.1-8b', numUsers: 200, cpuMemGb: 0, gpuMemGb: 0, maxConcurrentAllocs: 16, duration: 300, generationMode: 'none', seed: 42, storageCapacityGb: 0 })],
      ['mlperf-storage-throughput', 3, expect.objectContaining({ model: 'llama3.1-8b', numUsers: 100, cpuMemGb: 4, maxConcurrentAllocs: 16, duration: 300 })],
      ['mlperf-large-model', 3, expect.objectContaining({ model: 'llama3.1-70b-instruct', numUsers: 70, cpuMemGb: 0, maxConcurrentAllocs: 4, duration: 300 })],
    ]);
    expect(plan.estimate.totalSeconds).toBe(9 * (300 + ENGINE_OVERHEAD_S));
  });

  it('extras add the MLPerf options and capacity discovery; smoke shrinks them', () => {
    const plan = planSuite(fakeHardware(), { profile: 'smoke', cacheDir: '/mnt/kv', extras: true, trials: 1 });
    const cap = plan.runs.find((r) => r.scenarioId === 'capacity-discovery')!;
    expect(cap.options).toMatchObject({ model: 'tiny-1b', enableAutoscaling: true, autoscalerMode: 'capacity', generationMode: 'none' });
    expect(plan.runs.find((r) => r.scenarioId === 'mlperf-storage-stress')!.options).toMatchObject({ model: 'tiny-1b', numUsers: 8, cpuMemGb: 0 });
  });

  it('extras on quick/standard are the MLPerf workloads at the profile\'s duration and cap, and the plan and the report say so', () => {
    const standard = planSuite(fakeHardware(), { profile: 'standard', cacheDir: '/mnt/kv', extras: true, trials: 1 });
    const stress = standard.runs.find((r) => r.scenarioId === 'mlperf-storage-stress')!;
    expect(stress.options).toMatchObject({ duration: 180, storageCapacityGb: 64, numUsers: 200 });
    expect(stress.derivation).toContain("MLPerf option 1's workload: llama3.1-8b, 200 users, CPU 0 GiB, max 16 concurrent allocations");
    expect(stress.derivation).toContain(
      "generation none, GPU 0 (not the reference option: this profile's 180 s and 64 GiB storage cap; the reference runs 300 s with 95 % of the free space (--profile mlperf))",
    );
    expect(standard.runs.flatMap((r) => r.derivation).join('\n')).not.toMatch(/reference MLPerf option/);
    expect(standard.notes.join('\n')).toMatch(/^mlperf-storage-stress, mlperf-storage-throughput, mlperf-large-model run the MLPerf options' workloads at this profile's duration and storage capacity, not the reference options/m);
    // The report's row says the cap; a reference run's has none.
    expect(describeConfig(stress.options)).toBe('llama3.1-8b, 200 users, 180 s, CPU 0 GiB, GPU 0 GiB, generation none, storage 64 GiB, max-concurrent-allocs 16');
    const mlperf = planSuite(fakeHardware(), { profile: 'mlperf', cacheDir: '/mnt/kv', trials: 1 });
    const refStress = mlperf.runs.find((r) => r.scenarioId === 'mlperf-storage-stress')!;
    expect(refStress.derivation).toEqual(expect.arrayContaining(['MLPerf option 1: llama3.1-8b, 200 users, CPU 0 GiB, max 16 concurrent allocations', 'generation none, GPU 0 (reference MLPerf option)']));
    expect(mlperf.notes.join('\n')).not.toMatch(/not the reference/);
    expect(describeConfig(refStress.options)).toBe('llama3.1-8b, 200 users, 300 s, CPU 0 GiB, GPU 0 GiB, generation none, max-concurrent-allocs 16');
    // The mlperf profile shortened is no reference either; smoke says what it really runs.
    expect(planSuite(fakeHardware(), { profile: 'mlperf', cacheDir: '/mnt/kv', durationS: 60 }).runs[0].derivation.join('\n')).toMatch(/not the reference option: this profile's 60 s and 95 % of the free space/);
    const smoke = planSuite(fakeHardware(), { profile: 'smoke', cacheDir: '/mnt/kv', extras: true, trials: 1 });
    expect(smoke.runs.find((r) => r.scenarioId === 'mlperf-large-model')!.derivation).toContain("MLPerf option 3's workload: tiny-1b, 3 users, CPU 0 GiB, max 4 concurrent allocations");
    expect(smoke.runs.find((r) => r.scenarioId === 'capacity-discovery')!.derivation[1]).toMatch(/^capacity discovery: tiny-1b from 2 users, CPU 0\.25 GiB, generation none \(shrunk for smoke\)/);
  });

  it('smoke: tiny sizes, seconds per trial, a small capped storage tier, and an estimate', () => {
    const plan = planSuite(fakeHardware(), { profile: 'smoke', cacheDir: '/mnt/kv', trials: 3 });
    expect(plan.runs).toHaveLength(6);
    for (const r of plan.runs) {
      // 5 s: on a loaded 2-core VM a 3 s window closed before the first round of requests completed.
      expect(r.options).toMatchObject({ model: 'tiny-1b', duration: 5, generationMode: 'fast' });
      expect(Number(r.options.cpuMemGb)).toBeLessThanOrEqual(2);
      expect(Number(r.options.numUsers)).toBeLessThanOrEqual(8);
      expect(r.options.storageCapacityGb).toBe(2); // 2 × the largest tiny-1b entry (25,000 tokens × 24 KiB), rounded up
    }
    expect(plan.estimate).toMatchObject({ trialCount: 18, fits: true, peakDiskBytes: 2 * 1024 ** 3 });
    expect(plan.estimate.totalSeconds).toBe(18 * (5 + ENGINE_OVERHEAD_S));
  });

  it("smoke's derivations name the caps that gave its sizes, not the wrapper's rules (24 GiB RAM: RAM/2 would be 12 GiB)", () => {
    const plan = planSuite(fakeHardware({ ramGiB: 24, gpuGiB: 80 }), { profile: 'smoke', cacheDir: '/mnt/kv', trials: 1 });
    const by = Object.fromEntries(plan.runs.map((r) => [r.scenarioId, r.derivation]));
    expect(by['cpu-only']).toEqual(expect.arrayContaining(["CPU tier 2 GiB (smoke: min(RAM/2, 2 GiB), room for a 5 s trial's KV cache)", '4 users (smoke: baseline)']));
    expect(by['cpu-storage']).toEqual(expect.arrayContaining(['CPU tier 0.25 GiB (smoke: min(RAM/8, 0.25 GiB))', '8 users (smoke: high)']));
    expect(by['gpu-only']).toEqual(
      expect.arrayContaining(["GPU tier 2 GiB (smoke: at most 2 GiB of the first GPU's memory)", "CPU tier 0.25 GiB (smoke: the reference suite script's fixed 4 GiB, shrunk)", '4 users (smoke: baseline)']),
    );
    const text = plan.runs.flatMap((r) => r.derivation).join('\n');
    expect(text).not.toMatch(/\((RAM\/2|RAM\/8|high: RAM GiB × 10, 50\.\.300|baseline|high|the reference suite script's fixed value)\)/);
    expect(text).not.toMatch(/less what the tier leaves to the driver/);
  });

  it('smoke: the scenarios meant to stay in RAM or VRAM get tiers a smoke trial fits in, and every plan says the drive only takes what overflows them', () => {
    // The review's smoke cpu-only trial (1 GiB CPU tier, 6 s) wrote 1.13 GiB to the drive; with
    // 3 GiB, 5 s of it wrote 1.05 GiB in all: a 2 GiB tier keeps it under its 80 % fill target.
    const plan = planSuite(fakeHardware({ ramGiB: 24, gpuGiB: 80 }), { profile: 'smoke', cacheDir: '/mnt/kv', trials: 1 });
    const run = (id: string) => plan.runs.find((r) => r.scenarioId === id)!;
    expect(opts(run('cpu-only').options)).toMatchObject({ gpuMemGb: 0, cpuMemGb: 2 });
    expect(opts(run('gpu-cpu').options)).toMatchObject({ gpuMemGb: 2, cpuMemGb: 2 });
    expect(opts(run('gpu-only').options)).toMatchObject({ gpuMemGb: 2 });
    expect(run('cpu-only').derivation).toContain("CPU tier 2 GiB (smoke: min(RAM/2, 2 GiB), room for a 5 s trial's KV cache)");
    expect(run('cpu-only').derivation.at(-1)).toBe('storage tier capped at 2 GiB, only for what overflows the CPU tier: a trial that spills to it is flagged');
    expect(run('gpu-only').derivation.at(-1)).toBe('storage tier capped at 2 GiB, only for what overflows the GPU tier (as does its CPU tier): a trial that spills is flagged');
    expect(run('storage-only').derivation.at(-1)).toBe('storage tier capped at 2 GiB');
    // A machine with little RAM: never more than the engine lets a CPU tier hold (RAM less 2 GiB).
    const small = (ramGiB: number) => opts(planSuite(fakeHardware({ ramGiB, gpuGiB: null }), { profile: 'smoke', cacheDir: '/mnt/kv', scenarios: ['cpu-only'] }).runs[0].options).cpuMemGb;
    expect([small(4), small(3)]).toEqual([2, 1]);
    // The same plan at the wrapper's sizes says the same of its overflow.
    const quick = planSuite(fakeHardware({ ramGiB: 24, gpuGiB: null }), { profile: 'quick', cacheDir: '/mnt/kv', trials: 1 });
    expect(quick.runs.find((r) => r.scenarioId === 'cpu-only')!.derivation.at(-1)).toBe('storage tier capped at 16 GiB, only for what overflows the CPU tier: a trial that spills to it is flagged');
    // A new size is a new configuration: reports never pool these trials with the 1 GiB ones stored before.
    expect(configKey(run('cpu-only').options)).not.toBe(configKey({ ...run('cpu-only').options, cpuMemGb: 1 }));
  });

  it('warns where the users\' first requests alone overflow the tiers a scenario names: CPU only on a small machine spills to the drive', () => {
    // 24 GiB of RAM: CPU only's tier is RAM/2 = 12 GiB, which 50 users' first requests (about 0.69 GiB
    // of llama3.1-8b KV cache each) overflow many times; the trial is then flagged spilled after it runs.
    const quick = planSuite(fakeHardware({ ramGiB: 24, gpuGiB: 16 }), { profile: 'quick', cacheDir: '/mnt/kv', trials: 1 });
    const spills = quick.notes.filter((n) => n.includes('expected to spill'));
    expect(spills).toEqual([
      "gpu-only is expected to spill to the CPU tier and then the drive: its 50 users' first requests alone write about 34.4 GiB of llama3.1-8b KV cache, more than the 80 % of its 14.0 GiB GPU tier filled before entries move down (11.2 GiB); its trials will be flagged spilled, their numbers partly the slower tiers' (the tier sizes follow this machine's memory)",
      "cpu-only is expected to spill to the drive: its 50 users' first requests alone write about 34.4 GiB of llama3.1-8b KV cache, more than the 80 % of its 12.0 GiB CPU tier filled before entries move down (9.60 GiB); its trials will be flagged spilled, their numbers partly the drive's (the tier sizes follow this machine's memory)",
      // A GPU + CPU scenario counts both tiers it names.
      "gpu-cpu is expected to spill to the drive: its 50 users' first requests alone write about 34.4 GiB of llama3.1-8b KV cache, more than the 80 % of its 26.0 GiB GPU and CPU tiers filled before entries move down (20.8 GiB); its trials will be flagged spilled, their numbers partly the drive's (the tier sizes follow this machine's memory)",
    ]);
    // Enough memory for the first round: no such warning (later requests may still spill: the next test).
    const big = planSuite(fakeHardware({ ramGiB: 256, gpuGiB: 80 }), { profile: 'standard', cacheDir: '/mnt/kv', trials: 1 });
    expect(big.notes.filter((n) => n.includes('expected to spill'))).toEqual([]);
    // Smoke's tiny model and four users fit its 2 GiB tiers.
    const smoke = planSuite(fakeHardware({ ramGiB: 24, gpuGiB: 80 }), { profile: 'smoke', cacheDir: '/mnt/kv', trials: 1 });
    expect(smoke.notes.filter((n) => n.includes('expected to spill'))).toEqual([]);
  });

  it("says where a trial's users can fill the tiers it names before it ends, though their first requests fit (gpu-only on an H200 spilled 32 GiB of its 136 GiB in 35 s)", () => {
    // The lent H200: 139.80 GiB, 125.87 GiB of RAM; the quick suite gpu-check ran, with a 5 s warm-up.
    const h200 = planSuite(fakeHardware({ ramGiB: 125.87, gpuGiB: 139.8 }), { profile: 'quick', cacheDir: '/mnt/kv', trials: 1, warmUpS: 5, scenarios: ['gpu-only'] });
    expect(h200.notes.filter((n) => n.includes('spill'))).toEqual([
      // 50 workers ÷ 5.78 s of generation (5/8 × 308 tokens × 30 ms) × 0.689 GiB = 5.96 GiB/s; (108.8 − 34.4) GiB ÷ 5.96 GiB/s = 12 s.
      // An estimate, said as one: the personas weighted alike, where the H200's runs completed 3.5–4.3 s of generation a request.
      "gpu-only can spill to the CPU tier and then the drive later in its trial: by the plan's estimate its 50 users write about 5.96 GiB of llama3.1-8b KV cache a second " +
        "(each request writes a new entry, 706 MiB for the personas' mean context, and holds one of 50 workers for at least its simulated generation, " +
        '5.78 s for their mean generation tokens at 30 ms a token, each persona weighted alike), ' +
        'so after their first requests (34.4 GiB) the 80 % of its 136 GiB GPU tier filled before entries move down (109 GiB) can be reached about 12 s in, ' +
        "within the trial's 35 s (5 s warm-up, 30 s measured), later as the cache I/O slows the requests, sooner or later with the mix of requests served; " +
        "a trial that spills is flagged spilled, its numbers partly the slower tiers'",
    ]);
    // The sizes are restated in the app's units.
    expect(h200.noteSizes![h200.notes.findIndex((n) => n.includes('spill'))].map((x) => x.text)).toEqual(['5.96 GiB', '706 MiB', '34.4 GiB', '136 GiB', '109 GiB']);
    // Not where the trial ends first (a 5 s trial), and not without realistic generation, whose sleep bounds the rate.
    const short = planSuite(fakeHardware({ ramGiB: 125.87, gpuGiB: 139.8 }), { profile: 'quick', cacheDir: '/mnt/kv', trials: 1, durationS: 5, scenarios: ['gpu-only'] });
    expect(short.notes.filter((n) => n.includes('spill'))).toEqual([]);
    const smoke = planSuite(fakeHardware({ ramGiB: 24, gpuGiB: 80 }), { profile: 'smoke', cacheDir: '/mnt/kv', trials: 1 });
    expect(smoke.notes.filter((n) => n.includes('spill'))).toEqual([]);
    // The first-round warning, where it applies, says it instead.
    const small = planSuite(fakeHardware({ ramGiB: 24, gpuGiB: 16 }), { profile: 'quick', cacheDir: '/mnt/kv', trials: 1, scenarios: ['cpu-only'] });
    expect(small.notes.filter((n) => n.includes('spill')).map((n) => n.slice(0, 40))).toEqual(['cpu-only is expected to spill to the dri']);
  });

  it('smoke names the model it runs; the drive probe a plan has not run yet counts in its time and disk', () => {
    expect(planSuite(fakeHardware(), { profile: 'smoke', cacheDir: '/mnt/kv', model: 'llama3.1-8b' }).notes[0]).toMatch(/^smoke: the structure of the nine scenarios with tiny sizes \(llama3\.1-8b, /);
    const bare = planSuite(fakeHardware(), { profile: 'smoke', cacheDir: '/mnt/kv', trials: 1 });
    const probed = planSuite(fakeHardware(), { profile: 'smoke', cacheDir: '/mnt/kv', trials: 1, probeRun: { durationS: 1, sizeBytes: 256 * 1024 ** 2 } });
    expect(probed.estimate.totalSeconds - bare.estimate.totalSeconds).toBe(2 * 1 + PROBE_OVERHEAD_S);
    expect(probed.notes).toContain('the estimate includes the drive probe before the trials: about 6 s, with 256 MiB of files in the cache directory, removed after (--no-probe skips it)');
    // The probe's own size: min(8 GiB, 20 % of the free space), more than smoke's 2 GiB storage tier needs.
    const sized = planSuite(fakeHardware({ freeGiB: 30 }), { profile: 'smoke', cacheDir: '/mnt/kv', trials: 1, probeRun: { durationS: 5, sizeBytes: null } });
    expect(sized.estimate).toMatchObject({ requiredDiskBytes: 6 * GIB, peakDiskBytes: 6 * GIB });
    expect(sized.estimate.totalSeconds - bare.estimate.totalSeconds).toBe(10 + PROBE_OVERHEAD_S);
  });

  it('refuses, with the numbers, when the cache directory cannot hold the suite', () => {
    const plan = planSuite(fakeHardware({ freeGiB: 1 }), { profile: 'smoke', cacheDir: '/mnt/kv' });
    expect(plan.estimate.fits).toBe(false);
    expect(plan.estimate.problems.join('\n')).toMatch(/needs 2\.00 GiB free .* has 1\.00 GiB free/);
    const quick = planSuite(fakeHardware({ freeGiB: 10 }), { profile: 'quick', cacheDir: '/mnt/kv' });
    expect(quick.estimate.problems.join('\n')).toMatch(/storage tier 16 GiB.* 10\.0 GiB free/);
    // A directory with almost nothing free says how much, in a unit that shows it (not "0.02 GiB").
    const nearlyFull = planSuite(fakeHardware({ freeGiB: 20 / 1024 }), { profile: 'smoke', cacheDir: '/mnt/kv' }).estimate;
    expect(nearlyFull.problems.join('\n')).toMatch(/needs 2\.00 GiB free .* has 20\.0 MiB free/);
    // The sizes it states, with their bytes, for the app to state them in its units (the renderer's wizard test shows this one).
    expect(nearlyFull.problems).toEqual([LOW_SPACE_PROBLEM.text]);
    expect(nearlyFull.problemSizes).toEqual([LOW_SPACE_PROBLEM.sizes]);
    // With a capacity given by the user, the plan fits again.
    expect(planSuite(fakeHardware({ freeGiB: 10 }), { profile: 'quick', cacheDir: '/mnt/kv', storageCapacityGb: 8 }).estimate.fits).toBe(true);
  });

  describe('a RAM-backed cache directory: the storage tier lives in RAM beside the CPU tier', () => {
    /** The review's machine: 24 GiB of RAM, a 22 GiB tmpfs as the cache directory. */
    const onTmpfs = (availableGiB: number) => {
      const hw = fakeHardware({ ramGiB: 24, freeGiB: 22 });
      hw.memory.availableBytes = availableGiB * GIB;
      hw.cacheDir = { ...hw.cacheDir!, mountPoint: '/mnt/ram', filesystem: 'tmpfs', mountSource: 'tmpfs', blockDevice: null };
      return hw;
    };
    const reserve = 2.4 * GIB; // 10 % of 24 GiB
    const inRam = (r: { options: Record<string, unknown> }) => (Number(r.options.cpuMemGb) + Number(r.options.storageCapacityGb)) * GIB;

    it("shrinks the profile's storage cap where CPU tier + storage + reserve exceed the RAM available, and says so", () => {
      const hw = onTmpfs(22);
      const plan = planSuite(hw, { profile: 'quick', cacheDir: '/mnt/ram/kv' });
      expect(plan.estimate.fits).toBe(true);
      const by = Object.fromEntries(plan.runs.map((r) => [r.scenarioId, r]));
      // 22 GiB available − 2.4 reserve − 12 GiB CPU tier (RAM/2) leaves 7.6: 7 GiB, two 8B entries.
      expect(by['cpu-only'].options).toMatchObject({ cpuMemGb: 12, storageCapacityGb: 7 });
      expect(by.production.options).toMatchObject({ cpuMemGb: 12, storageCapacityGb: 7 });
      expect(by['cpu-storage'].options).toMatchObject({ cpuMemGb: 3, storageCapacityGb: 16 });
      for (const r of plan.runs) expect(inRam(r), r.scenarioId).toBeLessThanOrEqual(hw.memory.availableBytes - reserve);
      expect(by['cpu-only'].derivation).toContain('storage tier shrunk from 16 to 7 GiB: it lives in RAM (tmpfs) beside the CPU tier');
      expect(plan.notes).toContain('storage tiers shrunk to fit in RAM beside the CPU tier (22.0 GiB available, 2.40 GiB kept in reserve): cpu-only 7 GiB, production 7 GiB');
      // The same machine with the directory on a drive keeps the profile's cap.
      const onDisk = planSuite(fakeHardware({ ramGiB: 24, freeGiB: 22 }), { profile: 'quick', cacheDir: '/mnt/kv' });
      expect(onDisk.runs.find((r) => r.scenarioId === 'cpu-only')!.options.storageCapacityGb).toBe(16);
    });

    it('refuses a cap the user gave, or one that cannot shrink below two entries, with a PROBLEM saying what fits', () => {
      const given = planSuite(onTmpfs(22), { profile: 'quick', cacheDir: '/mnt/ram/kv', storageCapacityGb: 16 });
      expect(given.estimate.fits).toBe(false);
      expect(given.estimate.problems).toEqual([
        'the cache directory is RAM-backed (tmpfs): the storage tier lives in RAM beside the CPU tier, and 19.6 GiB of RAM is there for both (22.0 GiB available less a 2.40 GiB reserve). ' +
          'Too much for cpu-only (CPU tier 12.0 GiB + storage tier 16.0 GiB: room for 7 GiB of storage), production (CPU tier 12.0 GiB + storage tier 16.0 GiB: room for 7 GiB of storage). ' +
          'Set --storage-capacity-gb to 7 or less, or choose a --cache-dir on a drive',
      ]);
      // Every size the line states, with its bytes, for the app to state in its units.
      const sizes = given.estimate.problemSizes![0]!;
      expect(sizes.map((s) => s.text).sort()).toEqual(['12.0 GiB', '12.0 GiB', '16.0 GiB', '16.0 GiB', '19.6 GiB', '2.40 GiB', '22.0 GiB']);
      expect(sizes.find((s) => s.text === '22.0 GiB')!.bytes).toBe(22 * 1024 ** 3);
      expect(planSuite(onTmpfs(22), { profile: 'quick', cacheDir: '/mnt/ram/kv', storageCapacityGb: 7 }).estimate.fits).toBe(true);
      // 20 GiB available: 5 GiB beside the 12 GiB CPU tier, less than two 8B entries (7 GiB).
      const tight = planSuite(onTmpfs(20), { profile: 'quick', cacheDir: '/mnt/ram/kv' });
      expect(tight.estimate.fits).toBe(false);
      expect(tight.estimate.problems.join('\n')).toMatch(/cpu-only \(CPU tier 12\.0 GiB \+ storage tier 16\.0 GiB: room for 5 GiB of storage\).*No one --storage-capacity-gb fits them all/);
    });

    it("the automatic capacity (95 % of the tmpfs's free space) counts too", () => {
      const plan = planSuite(onTmpfs(22), { profile: 'mlperf', cacheDir: '/mnt/ram/kv' });
      expect(plan.estimate.fits).toBe(false);
      expect(plan.estimate.problems.join('\n')).toMatch(/mlperf-storage-stress \(storage tier 20\.9 GiB: room for 19 GiB of storage\)/);
    });

    it('a loop image on tmpfs adds to RAM only what of its file is not allocated yet', () => {
      const hw = onTmpfs(22);
      const loop = { name: 'loop0', disks: ['loop0'], model: null, serial: null, wwid: null, rotational: null, logicalBlockBytes: 512, physicalBlockBytes: 512, sizeBytes: 24 * GIB, media: 'ram' as const, backingFile: '/mnt/ram/disk.img', backingFilesystem: 'tmpfs' };
      hw.cacheDir = { ...hw.cacheDir!, filesystem: 'ext4', mountSource: '/dev/loop0', blockDevice: { ...loop, backingFileUnallocatedBytes: GIB } };
      const written = planSuite(hw, { profile: 'quick', cacheDir: '/mnt/kvdev', storageCapacityGb: 16 });
      expect(written.estimate.fits).toBe(true); // an image written in full is in RAM already: available RAM counts it
      expect(written.notes.join('\n')).toMatch(/RAM-backed filesystem \(loop0 on tmpfs\)/);
      hw.cacheDir.blockDevice = { ...loop, backingFileUnallocatedBytes: 24 * GIB };
      expect(planSuite(hw, { profile: 'quick', cacheDir: '/mnt/kvdev', storageCapacityGb: 16 }).estimate.problems.join('\n')).toMatch(/^the cache directory is RAM-backed \(loop0 on tmpfs\)/);
    });
  });

  it("automatic capacity: the engine's 95 % share of the free space must hold two of the largest entries, as a capped tier must", () => {
    // The review's case: 7.71 GiB free; 95 % of it (7.33 GiB) is below one 70B entry (7.63 GiB), so the engine refuses every trial.
    const large = (freeGiB: number) => planSuite(fakeHardware({ freeGiB }), { profile: 'mlperf', cacheDir: '/mnt/kv', scenarios: ['mlperf-large-model'], trials: 1 });
    const refused = large(7.71);
    expect(refused.estimate.fits).toBe(false);
    expect(refused.estimate.problems).toEqual([
      expect.stringMatching(/^the cache directory cannot hold this suite: it needs 16\.1 GiB free \(mlperf-large-model: 95 % of the free space must hold two of llama3\.1-70b-instruct's largest KV entries, 2 × 7\.63 GiB\) but \/mnt\/kv has 7\.71 GiB free/),
    ]);
    expect(large(16).estimate.fits).toBe(false); // 95 % of 16 GiB is 15.2 GiB, under two entries (15.26 GiB)
    expect(large(16.1).estimate.fits).toBe(true);
    expect(refused.runs[0].diskBytesRequired * AUTO_CAPACITY_SHARE).toBeCloseTo(2 * 7.62939453125 * GIB, 0);
  });

  it('refuses an explicit storage capacity too small to hold one entry of the model (every trial would fail)', () => {
    const plan = planSuite(fakeHardware({ gpuGiB: null }), { profile: 'smoke', cacheDir: '/mnt/kv', storageCapacityGb: 0.1, scenarios: ['cpu-only', 'storage-only'] });
    expect(plan.estimate.fits).toBe(false);
    expect(plan.estimate.problems).toEqual([
      expect.stringMatching(/^--storage-capacity-gb 0\.1 cannot hold one KV entry of tiny-1b \(the largest is 0\.\d\d GiB\), so cpu-only, storage-only would fail: set it to at least \d+ GiB, or 0/),
    ]);
    expect(planSuite(fakeHardware({ gpuGiB: null }), { profile: 'smoke', cacheDir: '/mnt/kv', storageCapacityGb: 2 }).estimate.fits).toBe(true);
  });

  it('a warm-up runs before every measured window except the autoscalers\', and the estimate counts it', () => {
    const plan = planSuite(fakeHardware({ gpuGiB: null }), { profile: 'quick', cacheDir: '/mnt/kv', warmUpS: 20, extras: true, trials: 1 });
    for (const r of plan.runs) {
      const autoscaling = r.options.enableAutoscaling === true;
      expect(r.options.warmUp, r.scenarioId).toBe(autoscaling ? 0 : 20);
      expect(validateRunOptions(r.options).ok, r.scenarioId).toBe(true);
      if (autoscaling) expect(r.derivation.join('\n')).toMatch(/no warm-up: the autoscaler ramps up/);
      else expect(r.derivation[0]).toMatch(/20 s warm-up then 30 s measured/);
    }
    const storageOnly = plan.runs.find((r) => r.scenarioId === 'storage-only')!;
    const without = planSuite(fakeHardware({ gpuGiB: null }), { profile: 'quick', cacheDir: '/mnt/kv', extras: true, trials: 1 });
    expect(storageOnly.estimatedSecondsPerTrial - without.runs.find((r) => r.scenarioId === 'storage-only')!.estimatedSecondsPerTrial).toBe(20);
    expect(without.runs.every((r) => r.options.warmUp === 0)).toBe(true);
    expect(() => planSuite(fakeHardware(), { profile: 'smoke', cacheDir: '/x', warmUpS: -1 })).toThrow(/--warm-up must be an integer from 0 to 3600/);
    expect(() => planSuite(fakeHardware(), { profile: 'smoke', cacheDir: '/x', warmUpS: 1.5 })).toThrow(/--warm-up/);
  });

  it('--max-requests ends every trial after that many completed requests, the duration still its longest, and is no reference MLPerf run', () => {
    const plan = planSuite(fakeHardware({ gpuGiB: null }), { profile: 'mlperf', cacheDir: '/mnt/kv', maxRequests: 40, trials: 1 });
    for (const r of plan.runs) {
      expect(r.options.maxRequests, r.scenarioId).toBe(40);
      expect(r.options.duration, r.scenarioId).toBe(300);
      expect(validateRunOptions(r.options).ok, r.scenarioId).toBe(true);
      expect(r.derivation[0]).toMatch(/300 s measured or until 40 requests completed, whichever is first/);
      expect(r.derivation.join('\n')).toMatch(/not the reference option: this profile's 300 s \(or 40 requests\)/);
    }
    expect(plan.notes).toContain('each trial ends once 40 requests have completed in its measured window, or at its 300 s if that comes first: the estimate is the longest it can take');
    const without = planSuite(fakeHardware({ gpuGiB: null }), { profile: 'mlperf', cacheDir: '/mnt/kv', trials: 1 });
    expect(without.runs.every((r) => r.options.maxRequests === 0)).toBe(true);
    expect(without.runs[0].derivation.join('\n')).toMatch(/reference MLPerf option/);
    expect(() => planSuite(fakeHardware(), { profile: 'smoke', cacheDir: '/x', maxRequests: -1 })).toThrow(/--max-requests must be an integer ≥ 0/);
    expect(() => planSuite(fakeHardware(), { profile: 'smoke', cacheDir: '/x', maxRequests: 2.5 })).toThrow(/--max-requests/);
  });

  it('rejects unknown scenarios and bad trial counts', () => {
    expect(() => planSuite(fakeHardware(), { profile: 'smoke', cacheDir: '/x', scenarios: ['nope'] })).toThrow(/unknown scenario\(s\): nope/);
    expect(() => planSuite(fakeHardware(), { profile: 'smoke', cacheDir: '/x', trials: 0 })).toThrow(/--trials/);
  });

  it('refuses a system directory as the cache directory, also behind a symbolic link, and names where it leads', () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kvb-plan-'));
    try {
      const link = path.join(tmp, 'innocent-looking');
      fs.symlinkSync('/dev', link);
      for (const cacheDir of ['/etc/kv', path.join(link, 'kv')]) {
        const errors = planOptionErrors({ profile: 'smoke', cacheDir });
        expect(errors, cacheDir).toEqual([`--cache-dir cannot be a system directory: ${cacheDir === '/etc/kv' ? '/etc/kv' : '/dev/kv'}`]);
        expect(() => planSuite(fakeHardware(), { profile: 'smoke', cacheDir })).toThrow(/--cache-dir cannot be a system directory/);
      }
      expect(planOptionErrors({ profile: 'smoke', cacheDir: path.join(tmp, 'kv') })).toEqual([]);
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });

  it('reports every bad planning option together, without the hardware', () => {
    expect(planOptionErrors({ profile: 'smoke', cacheDir: '/mnt/kv', trials: 101, model: 'nope', scenarios: ['cpu-only', 'bogus'] })).toEqual([
      '--trials must be an integer from 1 to 100, got 101',
      expect.stringMatching(/^unknown scenario\(s\): bogus\. Known: /),
      expect.stringMatching(/^--model: Unknown model 'nope'\. Available models: .*tiny-1b/),
    ]);
  });
});
