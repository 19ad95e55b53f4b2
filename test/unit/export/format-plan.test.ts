// What a headless user reads before a suite: the app's hardware advice, the plan, and how each run's
// parameters were derived (kvbench suite, kvbench suite --plan, kvbench hw).
import { describe, expect, it } from 'vitest';
import { hwCommand } from '../../../src-main/cli/hw-command.ts';
import { suiteCommand } from '../../../src-main/cli/suite-command.ts';
import { formatPlan } from '../../../src-main/export/render-text.ts';
import { hardwareAdvice } from '../../../src-main/hardware/advice.ts';
import { planSuite } from '../../../src-main/suite/planner.ts';
import { runInProcess } from '../cli/in-process.ts';
import { fakeHardware } from '../store/fixtures.ts';
import { PROFILES } from '../../../src-shared/domain/scenarios.ts';

/** A virtual machine without a GPU, its cache directory on the system disk. */
function onSystemDisk() {
  const hw = fakeHardware({ ramGiB: 24 });
  hw.system = { ...hw.system, virtual: true, virtualHost: 'KVM' };
  return hw;
}

describe('the plan as text', () => {
  it('states every size in one unit style: the review\'s 264 MB free is "252 MiB" in the advice, the estimate and the problem alike', () => {
    const hw = fakeHardware();
    hw.cacheDir = { ...hw.cacheDir!, freeBytes: 264e6 };
    const text = formatPlan(planSuite(hw, { profile: 'smoke', cacheDir: '/mnt/kv' }), hardwareAdvice(hw, false));
    expect(text).toContain('Only 252 MiB free in the cache directory');
    expect(text).toMatch(/^Estimate: .*disk: at most 2\.00 GiB at once in the cache directory \(needs 2\.00 GiB free; 252 MiB free\)\.$/m);
    expect(text).toMatch(/^PROBLEM: the cache directory cannot hold this suite: it needs 2\.00 GiB free \(cpu-only: storage tier 2 GiB\) but \/mnt\/kv has 252 MiB free\./m);
    expect(text).not.toMatch(/0\.25 GiB free/); // tier sizes in the derivations stay GiB, as their options
  });

  it("leads with the hardware advice the plan does not say itself, and shows every run's derivation", () => {
    const hw = onSystemDisk();
    const plan = planSuite(hw, { profile: 'quick', cacheDir: '/mnt/kv', trials: 1 });
    const text = formatPlan(plan, hardwareAdvice(hw, true));
    const lines = text.split('\n');
    expect(lines.slice(0, 3)).toEqual([
      'Advice',
      '  WARNING: Cache dir on the system disk (/): the operating system shares the drive with the benchmark and its numbers are noisier. Prefer a dedicated drive.',
      '  note: This is a virtual machine (KVM): virtual disks are noisy; compare runs taken close together.',
    ]);
    expect(lines[3]).toMatch(/^Suite plan: profile quick/);
    // "No GPU" is the plan's own skipped lines; it is not said twice.
    expect(text).not.toMatch(/No GPU:/);
    expect(text).toMatch(/^skipped gpu-only: no GPU detected$/m);
    expect(text).toContain('How each run was derived:\n');
    expect(text).toContain('\n  cpu-only: model llama3.1-8b, 30 s measured, generation realistic, seed 42; CPU tier 12 GiB (RAM/2); 50 users (baseline); storage tier capped at 16 GiB, only for what overflows the CPU tier: a trial that spills to it is flagged\n');
    expect(text).toContain('\n  cpu-storage: model llama3.1-8b, 30 s measured, generation realistic, seed 42; CPU tier 3 GiB (RAM/8); 240 users (high: RAM GiB × 10, 50..300); storage tier capped at 16 GiB\n');
    for (const r of plan.runs) expect(text).toContain(`\n  ${r.scenarioId}: ${r.derivation.join('; ')}\n`);
    // Without advice (a plan read back), the plan alone.
    expect(formatPlan(plan)).toMatch(/^Suite plan: /);
  });

  it("names scenarios in its notes by their CLI ids, as --scenarios takes them (the app's Plan step shows their labels)", () => {
    const text = formatPlan(planSuite(onSystemDisk(), { profile: 'quick', cacheDir: '/mnt/kv', trials: 1 }));
    expect(text).toMatch(/^note: 3 scenario\(s\) skipped: gpu-only, gpu-cpu, gpu-cpu-storage$/m);
    expect(text).toMatch(/^note: storage-saturation and cpu-storage have the same parameters here .*storage-saturation a fixed 4 GiB or 0 GiB CPU tier\. Both are kept, each under its own id, so stored history stays comparable$/m);
  });

  it("says which wrapper and which spec it means: the reference benchmark's suite script and its suite description, never \"the wrapper\" or \"the spec\" bare (rev12-gui M8)", () => {
    const bare = /\bthe (?:wrapper|spec)(?:'s)?\b/i;
    for (const p of Object.values(PROFILES)) expect(p.description, p.id).not.toMatch(bare);
    for (const profile of ['smoke', 'quick', 'standard'] as const) {
      const plan = planSuite(onSystemDisk(), { profile, cacheDir: '/mnt/kv', trials: 1 });
      const text = formatPlan(plan);
      expect(text, profile).not.toMatch(bare);
    }
    const text = formatPlan(planSuite(onSystemDisk(), { profile: 'quick', cacheDir: '/mnt/kv', trials: 1 }));
    expect(text).toMatch(/^note: storage-saturation and cpu-storage have the same parameters here \(the reference's suite description makes the "small" CPU tier RAM\/8, with high users\); the reference's suite script gave storage-saturation a fixed 4 GiB or 0 GiB CPU tier\. Both are kept, each under its own id, so stored history stays comparable$/m);
  });

  it('the header names every model the runs use (the mlperf profile runs 8B and 70B)', () => {
    expect(formatPlan(planSuite(fakeHardware(), { profile: 'mlperf', cacheDir: '/mnt/kv' }))).toMatch(/^Suite plan: profile mlperf, 3 trial\(s\) per scenario, models llama3\.1-8b, llama3\.1-70b-instruct, cache dir \/mnt\/kv$/m);
    expect(formatPlan(planSuite(fakeHardware(), { profile: 'smoke', cacheDir: '/mnt/kv' }))).toMatch(/^Suite plan: profile smoke, 3 trial\(s\) per scenario, model tiny-1b, /m);
  });
});

describe('headless commands print the advice', () => {
  // The root directory is always on the system disk's mount point, '/': the advice has something to say.
  const onRoot = '/kvbench-advice-test-never-created/kv';

  it('kvbench hw: after the table, less what the table says already', async () => {
    const r = await runInProcess(() => hwCommand(['--cache-dir', onRoot, '--no-direct-io-probe']));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Advice\n {2}WARNING: Cache dir on the system disk \(\/[ )]/m);
    expect(r.stdout.split('\nAdvice\n')[1]).not.toMatch(/No GPU:|cache dir: /);
  });

  it('kvbench suite --plan: before the plan, with the derivations', async () => {
    const r = await runInProcess(() => suiteCommand(['--plan', '--profile', 'smoke', '--no-probe', '--trials', '1', '--scenarios', 'cpu-only', '--cache-dir', onRoot, '--db', '/kvbench-advice-test-never-created/k.db']));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Advice\n {2}WARNING: Cache dir on the system disk \(\/[ )][\s\S]*\nSuite plan: profile smoke/);
    expect(r.stdout).toMatch(/^How each run was derived:\n {2}cpu-only: model tiny-1b, 5 s measured, generation fast, seed 42; CPU tier [\d.]+ GiB \(smoke: min\(RAM\/2, 2 GiB\), room for a 5 s trial's KV cache\)/m);
    expect(r.stdout).not.toMatch(/includes the drive probe/);
    // Without --no-probe a real run would probe the drive first: --plan counts it.
    const probing = await runInProcess(() => suiteCommand(['--plan', '--profile', 'smoke', '--trials', '1', '--scenarios', 'cpu-only', '--cache-dir', onRoot, '--db', '/kvbench-advice-test-never-created/k.db']));
    expect(probing.stdout).toMatch(/^note: the estimate includes the drive probe before the trials: about 6 s, with 256 MiB of files/m);
  });
});
