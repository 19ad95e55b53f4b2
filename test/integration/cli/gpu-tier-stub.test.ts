// The GPU tier end to end through the CLI, where there is no GPU: a stub libcuda.so.1 (host memory
// behind the driver API's C signatures) on LD_LIBRARY_PATH stands in for the NVIDIA driver. What this
// proves is the wiring a real GPU would go through: detection sees the device, the suite's planner
// enables the GPU scenarios, runs reserve the budget, move bytes through the tier and demote, and
// the results and the store carry the device and the measured copy bandwidth. The bandwidth numbers
// themselves mean nothing here (memcpy in the stub).
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HardwareProfile } from '../../../src-shared/domain/hardware.ts';
import { formatHardware } from '../../../src-main/hardware/format-hardware.ts';
import { buildStubLibcuda, hasCc } from '../../unit/gpu/stub-libcuda.ts';
import { skippedBecause } from '../../support/skip.ts';
import { explain, makeTempDir, readResults, removeTempDirs, runCli, runDirsIn } from './cli-harness.ts';

const MiB = 1024 * 1024;
const GIB = 1024 ** 3;

describe.skipIf(skippedBecause(!hasCc, "no C compiler (cc) to build the stub libcuda: the GPU tier's CLI tests do not run"))('the GPU tier through the CLI, on a stub libcuda', () => {
  let env: Record<string, string>;
  let tmp: string;

  beforeAll(() => {
    const lib = makeTempDir();
    buildStubLibcuda(lib);
    env = { LD_LIBRARY_PATH: lib, STUB_CUDA_MEMORY_MIB: '2048' };
    tmp = makeTempDir();
  });
  afterAll(removeTempDirs);

  it('kvbench hw lists the device from the driver API, usable by the GPU tier', async () => {
    const r = await runCli(['hw', '--json', '--cache-dir', tmp], { cwd: tmp, env });
    expect(r.code, explain(r)).toBe(0);
    const hw = JSON.parse(r.stdout) as HardwareProfile;
    expect(hw.cuda?.available).toBe(true);
    expect(hw.gpus).toHaveLength(1);
    expect(hw.gpus[0]).toMatchObject({ model: 'Stub CUDA Device 0', memoryBytes: 2 * GIB, engineUsable: true });
    // cuDriverGetVersion is the CUDA version the driver supports, not a toolkit in use: the text says so.
    const text = await runCli(['hw', '--cache-dir', tmp], { cwd: tmp, env });
    expect(text.code, explain(text)).toBe(0);
    expect(text.stdout).toMatch(/^ {2}CUDA driver +1 device\(s\), driver —, supports CUDA 12\.4$/m);
  });

  it('kvbench hw --probe measures the GPU tier\'s copy limit on the device, beside the memory copy', async () => {
    const r = await runCli(['hw', '--probe', '--probe-seconds', '0.2', '--json', '--cache-dir', tmp], { cwd: tmp, env });
    expect(r.code, explain(r)).toBe(0);
    const hw = JSON.parse(r.stdout) as HardwareProfile;
    expect(hw.memoryCopyBytesPerSec).toBeGreaterThan(0);
    expect(hw.gpuCopy).toMatchObject({ device: 0, model: 'Stub CUDA Device 0', chunkBytes: 16 * MiB, bytesPerDirection: 4 * GIB, copyThreads: 2, stagingPinned: true });
    expect(hw.gpuCopy!.h2dBytesPerSec).toBeGreaterThan(0);
    expect(hw.gpuCopy!.d2hBytesPerSec).toBeGreaterThan(0);
    expect(formatHardware(hw)).toMatch(/^ {2}GPU copy {11}host→device [\d.]+ [MG]B\/s, device→host [\d.]+ [MG]B\/s \(kvbench GPU copy probe on GPU 0, Stub CUDA Device 0: 4\.00 GiB each way in 16\.0 MiB copies through the GPU tier, pinned staging, 2 copy threads; link busy\)$/m);
  });

  it('kvbench run moves real bytes through the GPU tier, demotes to the CPU tier, and reports the device and copies', async () => {
    const output = path.join(tmp, 'gpu-run.json');
    const r = await runCli(
      ['run', '--model', 'tiny-1b', '--num-users', '4', '--duration', '4', '--generation-mode', 'none',
        '--gpu-mem-gb', '0.25', '--cpu-mem-gb', '0.25', '--cache-dir', tmp, '--seed', '3', '--output', output],
      { cwd: tmp, env },
    );
    expect(r.code, explain(r)).toBe(0);
    expect(runDirsIn(tmp)).toEqual([]);
    const res = readResults(output);
    const gpu = res.kvbench.tiers.gpu;
    expect(gpu).toMatchObject({ present: true, reason: null, budget_bytes: 256 * MiB, requested_bytes: 256 * MiB, staging_pinned: true, cuda_version: '12.4' });
    expect(gpu.devices).toEqual([expect.objectContaining({ model: 'Stub CUDA Device 0', reserved_bytes: 256 * MiB, shortfall: null })]);
    const moved = res.kvbench.tier_bytes.gpu;
    expect(moved.write_bytes).toBeGreaterThan(0);
    expect(moved.read_bytes).toBeGreaterThan(0);
    // Every byte the tier wrote or read went through a timed copy, and the copy counters count the
    // same window as the tier's bytes (frozen when it closes, not after the drain): they reconcile.
    expect(gpu.h2d_copy_bytes).toBe(moved.write_bytes);
    expect(gpu.d2h_staging_copy_bytes).toBe(moved.read_bytes - moved.demoted_out_bytes);
    expect(gpu.demotion_d2h_copy_bytes).toBe(moved.demoted_out_bytes);
    expect(gpu.d2h_copy_bytes).toBe(moved.read_bytes);
    expect(gpu.h2d_copy_bandwidth_bytes_per_sec!).toBeGreaterThan(0);
    expect(gpu.d2h_copy_bandwidth_bytes_per_sec!).toBeGreaterThan(0);
    // 4 users of tiny-1b outgrow a 256 MiB tier: entries are demoted to the CPU tier, never dropped.
    expect(res.kvbench.demotions['gpu->cpu']?.count ?? 0).toBeGreaterThan(0);
    expect(res.kvbench.tier_bytes.cpu.write_bytes).toBeGreaterThan(0);
    // The console summary says the same.
    expect(r.stdout).toMatch(/^ {4}GPU 0: Stub CUDA Device 0, 2\.00 GiB, PCI 00000000:41:00\.0, reserved 0\.25 GiB$/m);
    expect(r.stdout).toMatch(/^ {4}NVIDIA driver version unknown \(supports CUDA 12\.4; libcuda\.so\.1\); staging .* pinned, 2 copy threads, 16\.0 MiB chunks$/m);
    expect(r.stdout).toMatch(
      /^ {4}Copies .*host→device .* in \d+ copies, [\d.]+ GB\/s link busy, [\d.]+ GB\/s per copy; device→host \(staging\) .* GB\/s link busy, [\d.]+ GB\/s per copy; device→host \(demotions, pageable\) .* in \d+ copies, [\d.]+ GB\/s link busy, [\d.]+ GB\/s per copy$/m,
    );
    // Demotion copies are counted apart; the older d2h_copy_* fields still count every device→host copy.
    expect(gpu.demotion_d2h_copies!).toBeGreaterThan(0);
    expect(gpu.d2h_copies).toBe(gpu.d2h_staging_copies! + gpu.demotion_d2h_copies!);
    expect(gpu.h2d_link_busy_bytes_per_sec!).toBeGreaterThan(0);
    expect(gpu.d2h_staging_link_busy_bytes_per_sec!).toBeGreaterThan(0);
    // GPU latency split as the storage tier's: device (the entry's own copies executing) and host.
    const cs = res.summary!.cache_stats as Record<string, number>;
    for (const op of ['read', 'write']) {
      expect(cs[`gpu_${op}_device_p95_ms`], op).toBeGreaterThan(0);
      expect(cs[`gpu_${op}_host_p95_ms`], op).toBeGreaterThanOrEqual(0);
      expect(cs[`gpu_${op}_device_p95_ms`], op).toBeLessThanOrEqual(cs[`gpu_${op}_p95_ms`]);
    }
    expect(r.stdout).toContain("### GPU TIER LATENCY BREAKDOWN (Device = time with at least one of the entry's own copies executing");
    expect(r.stdout).toMatch(/^ {4}- Device P95 \(own copies executing\): [\d.]+ ms$/m);
    // The staging is page-locked host memory the engine holds: among its buffers, and in their total.
    const fixed = res.kvbench.engine_health.memory!.fixed_buffers;
    expect(fixed).toMatchObject({ gpu_staging_bytes: gpu.staging_bytes, gpu_staging_pinned: true });
    expect(fixed.total_bytes).toBe(
      fixed.cpu_tier_arena_bytes + fixed.storage_io_buffers_bytes + fixed.cpu_read_staging_bytes + fixed.payload_pool_bytes + gpu.staging_bytes!,
    );
    expect(r.stdout).toMatch(/^ {4}Memory: buffers reserved .*, GPU staging 128\.0 MiB page-locked \(pinned\)\); /m);
    // How the chunks got their staging slots (the engine's 8).
    expect(gpu.staging_slots).toBe(8);
    expect(gpu.staging_slot_acquisitions!).toBeGreaterThan(0);
    expect(r.stdout).toMatch(/^ {4}Staging slots \(8 × 16\.0 MiB, shared by every GPU read and write\): [\d,]+ taken in the measured phase, [\d,]+ \([\d.]+%\) after waiting for one/m);
  });

  it('the suite plans and runs the GPU scenarios, and the store keeps the copy bandwidth of each trial', async () => {
    const db = path.join(tmp, 'kvbench.sqlite');
    const plan = await runCli(['suite', '--plan', '--profile', 'smoke', '--cache-dir', tmp, '--db', db], { cwd: tmp, env });
    expect(plan.code, explain(plan)).toBe(0);
    expect(plan.stdout + plan.stderr).not.toMatch(/skipped gpu/);
    expect(plan.stdout).toMatch(/^gpu-only /m);
    expect(plan.stdout).toMatch(/^gpu-cpu-storage /m);

    const suite = await runCli(
      ['suite', '--profile', 'smoke', '--trials', '1', '--no-probe', '--scenarios', 'gpu-only,gpu-cpu-storage', '--cache-dir', tmp, '--db', db],
      { cwd: tmp, env },
    );
    expect(suite.code, explain(suite)).toBe(0);
    const exported = path.join(tmp, 'trials.json');
    const ex = await runCli(['export', '--out', exported, '--db', db], { cwd: tmp, env });
    expect(ex.code, explain(ex)).toBe(0);
    const trials = (JSON.parse(fs.readFileSync(exported, 'utf8')) as { trials: { scenarioId: string; status: string; metrics: Record<string, number> }[] }).trials;
    expect(trials.map((t) => t.scenarioId).sort()).toEqual(['gpu-cpu-storage', 'gpu-only']);
    for (const t of trials) {
      expect(t.status, t.scenarioId).toBe('complete');
      expect(t.metrics.gpu_write_bytes, t.scenarioId).toBeGreaterThan(0);
      expect(t.metrics.gpu_h2d_copy_bytes_per_s, t.scenarioId).toBeGreaterThan(0);
      expect(t.metrics.gpu_d2h_copy_bytes_per_s, t.scenarioId).toBeGreaterThan(0);
      // What the tier was, beside what the suite asked for: the whole budget, pinned staging.
      expect(t.metrics.gpu_tier_present, t.scenarioId).toBe(1);
      expect(t.metrics.gpu_tier_requested_bytes, t.scenarioId).toBeGreaterThan(0);
      expect(t.metrics.gpu_tier_reserved_bytes, t.scenarioId).toBe(t.metrics.gpu_tier_requested_bytes);
      expect(t.metrics.gpu_staging_pinned, t.scenarioId).toBe(1);
      // The link-busy figures of this kvbench's own runs (0.8.1 on), and the GPU tier's hits among the trial's reads.
      expect(t.metrics.gpu_h2d_link_bytes_per_s, t.scenarioId).toBeGreaterThan(0);
      expect(t.metrics.gpu_d2h_link_bytes_per_s, t.scenarioId).toBeGreaterThan(0);
      expect(t.metrics.gpu_hit_read_bytes, t.scenarioId).toBeGreaterThan(0);
      expect(t.metrics.gpu_hit_read_bytes, t.scenarioId).toBeLessThanOrEqual(t.metrics.total_read_bytes);
    }
  });
});
