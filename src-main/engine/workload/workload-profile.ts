import type { Tuning } from '../../../src-shared/domain/run-options.ts';
import {
  CONVERSATION_END_PROBABILITY,
  CONVERSATION_MAX_TURNS,
  DECODE_BATCH_TOKENS,
  GENERATION_SECONDS_PER_TOKEN,
  MAX_TRACKED_CONVERSATIONS,
  PERSONAS,
  QOS_CLASSES,
  RAG_CHUNK_TOKENS,
  RAG_MAX_CHUNK_BYTES,
  RAG_REQUEST_PROBABILITY,
  RAG_TOP_K,
  SYSTEM_PROMPT_PROBABILITY,
  type GenerationMode,
  type Persona,
  type QosClass,
} from './personas.ts';
import { TIER_ENTRY_SIZE_CAP, TIER_FILL_TARGET } from '../cache/multi-tier-cache.ts';

/** Every workload constant of a run: the reference's defaults, overridden by the config's tuning sections. */
export interface WorkloadProfile {
  personas: Persona[];
  qos: QosClass[];
  generationSecondsPerToken: Record<GenerationMode, number>;
  conversationEndProbability: number;
  conversationMaxTurns: number;
  maxTrackedConversations: number;
  systemPromptProbability: number;
  decodeBatchTokens: number;
  tierFillTarget: number;
  tierEntrySizeCap: number;
  rag: {
    chunkTokens: number;
    topK: number;
    maxChunkBytes: number;
    requestProbability: number;
    largeModelDocTokens: [number, number];
    smallModelDocTokens: [number, number];
  };
}

export const DEFAULT_WORKLOAD_PROFILE: Readonly<WorkloadProfile> = Object.freeze<WorkloadProfile>({
  personas: PERSONAS.map((p) => ({ ...p })),
  qos: QOS_CLASSES.map((q) => ({ ...q })),
  generationSecondsPerToken: { ...GENERATION_SECONDS_PER_TOKEN },
  conversationEndProbability: CONVERSATION_END_PROBABILITY,
  conversationMaxTurns: CONVERSATION_MAX_TURNS,
  maxTrackedConversations: MAX_TRACKED_CONVERSATIONS,
  systemPromptProbability: SYSTEM_PROMPT_PROBABILITY,
  decodeBatchTokens: DECODE_BATCH_TOKENS,
  tierFillTarget: TIER_FILL_TARGET,
  tierEntrySizeCap: TIER_ENTRY_SIZE_CAP,
  rag: {
    chunkTokens: RAG_CHUNK_TOKENS,
    topK: RAG_TOP_K,
    maxChunkBytes: RAG_MAX_CHUNK_BYTES,
    requestProbability: RAG_REQUEST_PROBABILITY,
    largeModelDocTokens: [1024, 4096],
    smallModelDocTokens: [4000, 12000],
  },
});

/**
 * Applies the config's tuning sections. Keys this build does not act on are returned by name, so the
 * run can say so (warning and results) instead of ignoring them silently as the reference did.
 */
export function resolveWorkloadProfile(tuning: Tuning): { profile: WorkloadProfile; notApplied: string[] } {
  const p: WorkloadProfile = structuredClone(DEFAULT_WORKLOAD_PROFILE) as WorkloadProfile;
  const notApplied: string[] = [];
  const skip = (section: string, obj: object | undefined, keys: string[]): void => {
    if (!obj) return;
    for (const k of keys) if ((obj as Record<string, unknown>)[k] !== undefined) notApplied.push(`${section}.${k}`);
  };

  for (const persona of p.personas) {
    const t = tuning.user_templates?.[persona.name];
    if (!t) continue;
    if (t.context_range) persona.contextTokens = [...t.context_range];
    if (t.generation_range) persona.generationTokens = [...t.generation_range];
    if (t.think_time_range) persona.thinkTimeS = [...t.think_time_range];
  }
  const g = tuning.generation_timing;
  if (g) {
    for (const mode of ['none', 'fast', 'realistic'] as const) if (g[mode] !== undefined) p.generationSecondsPerToken[mode] = g[mode]!;
  }
  for (const q of p.qos) {
    const t = tuning.qos_profiles?.[q.level];
    if (!t) continue;
    if (t.target_latency_p95_ms !== undefined) q.targetP95Ms = t.target_latency_p95_ms;
    if (t.priority !== undefined) q.priority = t.priority;
    skip(`qos_profiles.${q.level}`, t, ['target_latency_p99_ms', 'target_latency_p999_ms', 'target_latency_p9999_ms']);
  }
  const d = tuning.qos_distribution;
  if (d) {
    const interactive = d.interactive_probability ?? p.qos[0].share;
    const responsiveThreshold = d.responsive_threshold ?? p.qos[0].share + p.qos[1].share;
    p.qos[0].share = interactive;
    p.qos[1].share = Math.max(0, responsiveThreshold - interactive);
    p.qos[2].share = Math.max(0, 1 - responsiveThreshold);
  }
  const c = tuning.conversation;
  if (c) {
    if (c.max_conversations !== undefined) p.maxTrackedConversations = c.max_conversations;
    if (c.max_turns_per_conv !== undefined) p.conversationMaxTurns = c.max_turns_per_conv;
    if (c.end_conversation_probability !== undefined) p.conversationEndProbability = c.end_conversation_probability;
  }
  const pc = tuning.prefix_cache;
  if (pc) {
    if (pc.system_prompt_hit_probability !== undefined) p.systemPromptProbability = pc.system_prompt_hit_probability;
    skip('prefix_cache', pc, ['min_prefix_length', 'max_prefix_entries']);
  }
  if (tuning.decode?.batch_size !== undefined) p.decodeBatchTokens = tuning.decode.batch_size;
  const e = tuning.eviction;
  if (e) {
    if (e.target_usage_ratio !== undefined) p.tierFillTarget = e.target_usage_ratio;
    if (e.large_entry_limit_ratio !== undefined) p.tierEntrySizeCap = e.large_entry_limit_ratio;
    // kvbench's eviction has no recursion or count caps to tune: it evicts exactly what is needed.
    skip('eviction', e, ['max_recursion_depth', 'max_evictions_hard_cap', 'max_evictions_min']);
  }
  const r = tuning.rag;
  if (r) {
    if (r.chunk_size_tokens !== undefined) p.rag.chunkTokens = r.chunk_size_tokens;
    if (r.top_k_chunks !== undefined) p.rag.topK = r.top_k_chunks;
    if (r.max_chunk_bytes !== undefined) p.rag.maxChunkBytes = r.max_chunk_bytes;
    if (r.request_probability !== undefined) p.rag.requestProbability = r.request_probability;
    if (r.large_model_doc_tokens_min !== undefined) p.rag.largeModelDocTokens[0] = r.large_model_doc_tokens_min;
    if (r.large_model_doc_tokens_max !== undefined) p.rag.largeModelDocTokens[1] = r.large_model_doc_tokens_max;
    if (r.small_model_doc_tokens_min !== undefined) p.rag.smallModelDocTokens[0] = r.small_model_doc_tokens_min;
    if (r.small_model_doc_tokens_max !== undefined) p.rag.smallModelDocTokens[1] = r.small_model_doc_tokens_max;
    if (r.retrieval_distribution !== undefined && r.retrieval_distribution !== 'zipfian') notApplied.push('rag.retrieval_distribution');
    skip('rag', r, ['max_documents']);
  }
  // The autoscaler reads `autoscaler` and the read threshold of `saturation_detection`; the ShareGPT
  // source reads `sharegpt`. The GPU tier reserves its budget up front, so `gpu_backend` has no effect.
  if (tuning.gpu_backend) skip('gpu_backend', tuning.gpu_backend, Object.keys(tuning.gpu_backend));
  skip('saturation_detection', tuning.saturation_detection, ['write_latency_p95_threshold_ms', 'queue_depth_threshold', 'history_window_size']);
  return { profile: p, notApplied };
}
