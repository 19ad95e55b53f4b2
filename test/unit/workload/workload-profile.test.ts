import { describe, expect, it } from 'vitest';
import { DEFAULT_WORKLOAD_PROFILE, resolveWorkloadProfile } from '../../../src-main/engine/workload/workload-profile.ts';
import { SyntheticWorkload } from '../../../src-main/engine/workload/synthetic-workload.ts';

describe('resolveWorkloadProfile', () => {
  it('is the reference workload when the config has no tuning sections', () => {
    const { profile, notApplied } = resolveWorkloadProfile({});
    expect(profile).toEqual(DEFAULT_WORKLOAD_PROFILE);
    expect(notApplied).toEqual([]);
  });

  it('applies tuning sections, and the workload follows them', () => {
    const { profile } = resolveWorkloadProfile({
      user_templates: { chatbot: { context_range: [100, 100] }, coding: { context_range: [100, 100] }, document: { context_range: [100, 100] } },
      qos_distribution: { interactive_probability: 1, responsive_threshold: 1 },
      conversation: { max_turns_per_conv: 2, end_conversation_probability: 0 },
      decode: { batch_size: 64 },
      eviction: { target_usage_ratio: 0.5 },
    });
    expect(profile.decodeBatchTokens).toBe(64);
    expect(profile.tierFillTarget).toBe(0.5);
    const w = new SyntheticWorkload({ seed: 1, numUsers: 20, multiTurn: true, prefixCaching: false, mode: 'standard', ragDocuments: null, prepopulatedKeys: [], profile });
    const reqs = Array.from({ length: 300 }, () => w.next());
    expect(reqs.every((r) => r.contextTokens >= 25 && r.contextTokens <= 100)).toBe(true);
    expect(reqs.every((r) => r.qos === 'interactive')).toBe(true);
    expect(Math.max(...reqs.map((r) => r.turn))).toBe(2);
  });

  it('names the keys it accepts but does not act on, instead of ignoring them silently', () => {
    const { notApplied } = resolveWorkloadProfile({
      gpu_backend: { memory_fraction: 0.9 },
      eviction: { max_recursion_depth: 10 },
      qos_profiles: { interactive: { target_latency_p95_ms: 40, target_latency_p99_ms: 80 } },
    });
    expect(notApplied.sort()).toEqual(['eviction.max_recursion_depth', 'gpu_backend.memory_fraction', 'qos_profiles.interactive.target_latency_p99_ms']);
  });
});
