import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInCgroup, setUpThrottledDevice, type ThrottledDevice } from '../../support/throttled-device.ts';

// The autoscaler against a device whose bandwidth is known and low: capacity mode must find a peak
// and stop the run; qos mode must react to latency above its target by removing users.
const repo = path.resolve(import.meta.dirname, '../../..');
const MODEL_CONFIG = `model_configs:
  small-kv:
    num_layers: 1
    hidden_dim: 512
    num_heads: 4
    kv_heads: 4
`;

let device: ThrottledDevice | string;
beforeAll(() => {
  device = setUpThrottledDevice({ imageMiB: 1024, bytesPerSec: 60_000_000, tag: 'autoscale' });
  if (typeof device === 'string') console.warn(`skipping the throttled-device autoscaler tests: ${device}`);
});
afterAll(() => {
  if (typeof device !== 'string') device.tearDown();
});

async function runAutoscaled(mode: 'capacity' | 'qos', extra: string[]): Promise<{ results: any; stderr: string; code: number | null }> {
  const d = device as ThrottledDevice;
  const work = fs.mkdtempSync(path.join(d.mountDir, `${mode}-`));
  const config = path.join(work, 'models.yaml');
  fs.writeFileSync(config, MODEL_CONFIG);
  const out = path.join(work, 'r.json');
  const r = await runInCgroup(
    d.cgroupDir,
    [process.execPath, path.join(repo, 'bin/kvbench.js'), 'run', '--config', config, '--model', 'small-kv', '--gpu-mem-gb', '0', '--cpu-mem-gb', '0',
      '--generation-mode', 'none', '--cache-dir', path.join(work, 'cache'), '--storage-capacity-gb', '0.6', '--seed', '7',
      '--enable-autoscaling', '--autoscaler-mode', mode, '--autoscaler-interval', '2', '--output', out, ...extra],
    repo,
  );
  const results = fs.existsSync(out) ? JSON.parse(fs.readFileSync(out, 'utf8')) : null;
  return { results, stderr: r.stderr, code: r.code };
}

describe('autoscaler on a throttled device', () => {
  it('capacity mode adds users until throughput stops rising, then stops the run at the peak', async (ctx) => {
    if (typeof device === 'string') return ctx.skip();
    const { results, stderr, code } = await runAutoscaled('capacity', ['--num-users', '2', '--duration', '90']);
    expect(code, stderr).toBe(0);
    const summary = results.summary.autoscaling_summary;
    expect(summary.peak_found).toBe(true);
    expect(results.kvbench.status_reason).toMatch(/peak found/);
    expect(results.kvbench.elapsed_ns / 1e9).toBeLessThan(90);
    const events = results.summary.autoscaling_stats as { action: string; users: number }[];
    expect(events.some((e) => e.action === 'scale_up')).toBe(true);
    expect(events.at(-1)!.action).toBe('stop');
    // Users really changed: the timeline's user counts are not all the initial one.
    const users = (results.kvbench.autoscaling_timeline as { users: number }[]).map((t) => t.users);
    expect(Math.max(...users)).toBeGreaterThan(2);
    expect(summary.final_users).toBeGreaterThan(2);
  }, 180_000);

  it('qos mode removes users when storage read latency is above its target', async (ctx) => {
    if (typeof device === 'string') return ctx.skip();
    const { results, stderr, code } = await runAutoscaled('qos', ['--num-users', '40', '--duration', '24', '--target-saturation', '0.2']);
    expect(code, stderr).toBe(0);
    const events = results.summary.autoscaling_stats as { action: string; users: number; saturation_level: number }[];
    const downs = events.filter((e) => e.action === 'scale_down');
    expect(downs.length).toBeGreaterThan(0);
    for (const e of downs) expect(e.saturation_level).toBeGreaterThan(0.2 * 1.1);
    expect(results.summary.autoscaling_summary.final_users).toBeLessThan(40);
  }, 120_000);

  it('qos mode takes an interval in which storage I/O was in flight but none completed for saturated, not idle', async (ctx) => {
    if (typeof device === 'string') return ctx.skip();
    // 12 KiB per token: entries of tens to hundreds of MB, so at 60 MB/s shared by two users an
    // interval can pass with none moved (the first does), while smaller ones let requests complete.
    const d = device as ThrottledDevice;
    const work = fs.mkdtempSync(path.join(d.mountDir, 'qos-slow-'));
    const config = path.join(work, 'models.yaml');
    fs.writeFileSync(config, 'model_configs:\n  mid-kv:\n    num_layers: 6\n    hidden_dim: 1024\n    num_heads: 8\n    kv_heads: 4\n');
    const out = path.join(work, 'r.json');
    const r = await runInCgroup(
      d.cgroupDir,
      [process.execPath, path.join(repo, 'bin/kvbench.js'), 'run', '--config', config, '--model', 'mid-kv', '--gpu-mem-gb', '0', '--cpu-mem-gb', '0', '--generation-mode', 'none',
        '--cache-dir', path.join(work, 'cache'), '--storage-capacity-gb', '0.6', '--seed', '7', '--num-users', '2', '--duration', '12',
        '--enable-autoscaling', '--autoscaler-mode', 'qos', '--autoscaler-interval', '1', '--output', out],
      repo,
    );
    const results = JSON.parse(fs.readFileSync(out, 'utf8'));
    expect(r.code, `${results.kvbench.status_reason}\n${r.stderr}`).toBe(0);
    type Step = { action: string; saturation_level: number; read_latency_p95_ms: number | null; write_latency_p95_ms: number | null; read_in_flight_oldest_ms: number | null; write_in_flight_oldest_ms: number | null };
    const steps = results.summary.autoscaling_stats as Step[];
    const nothingCompleted = steps.filter((e) => e.read_latency_p95_ms === null && e.write_latency_p95_ms === null && (e.read_in_flight_oldest_ms ?? e.write_in_flight_oldest_ms) !== null);
    // The run did have such intervals (the case under test), and none of them counted as idle.
    expect(nothingCompleted.length, JSON.stringify(steps)).toBeGreaterThan(0);
    for (const e of nothingCompleted) {
      expect(e.saturation_level).toBeGreaterThan(0);
      expect(e.action).not.toBe('scale_up');
    }
  }, 120_000);
});
