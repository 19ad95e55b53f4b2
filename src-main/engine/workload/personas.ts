/** The reference's user personas, QoS classes and per-request constants. */

export type PersonaName = 'chatbot' | 'coding' | 'document';
export type QosLevel = 'interactive' | 'responsive' | 'batch';
export type GenerationMode = 'none' | 'fast' | 'realistic';
export type RequestPhase = 'prefill' | 'decode' | 'prefill_decode';

export interface Persona {
  name: PersonaName;
  contextTokens: [number, number];
  generationTokens: [number, number];
  thinkTimeS: [number, number];
}

export const PERSONAS: readonly Persona[] = [
  { name: 'chatbot', contextTokens: [512, 4096], generationTokens: [50, 200], thinkTimeS: [0.1, 0.5] },
  { name: 'coding', contextTokens: [4096, 25000], generationTokens: [100, 500], thinkTimeS: [0.2, 1.0] },
  { name: 'document', contextTokens: [4096, 16384], generationTokens: [200, 800], thinkTimeS: [0.3, 1.5] },
];

export interface QosClass {
  level: QosLevel;
  /** Share of users in this class. */
  share: number;
  targetP95Ms: number;
  priority: number;
}

export const QOS_CLASSES: readonly QosClass[] = [
  { level: 'interactive', share: 0.15, targetP95Ms: 50, priority: 3 },
  { level: 'responsive', share: 0.35, targetP95Ms: 100, priority: 2 },
  { level: 'batch', share: 0.5, targetP95Ms: 1000, priority: 1 },
];

/** Seconds of simulated GPU time per generated token. */
export const GENERATION_SECONDS_PER_TOKEN: Record<GenerationMode, number> = {
  none: 0,
  fast: 0.002,
  realistic: 0.03,
};

/** Requests with at least this many context tokens only prefill (no decode reads). */
export const PREFILL_ONLY_CONTEXT_TOKENS = 10_000;
/** Tokens decoded per batch: a decode hit re-reads the entry ceil(generated / 32) more times. */
export const DECODE_BATCH_TOKENS = 32;
export const CONVERSATION_END_PROBABILITY = 0.2;
export const CONVERSATION_MAX_TURNS = 50;
export const MAX_TRACKED_CONVERSATIONS = 1000;
export const SYSTEM_PROMPT_PROBABILITY = 0.2;
export const RAG_REQUEST_PROBABILITY = 0.1;
export const RAG_TOP_K = 5;
export const RAG_CHUNK_TOKENS = 512;
export const RAG_MAX_CHUNK_BYTES = 256 * 1024 * 1024;
export const MAX_WORKERS = 500;
/** Entries written before a decode-only run, per user, and their size. */
export const DECODE_ONLY_ENTRIES_PER_USER = 10;
export const PREPOPULATED_ENTRY_TOKENS = 2048;

/** The three shared system prompts; their token count is their word count, as in the reference. */
export const SYSTEM_PROMPTS: readonly string[] = [
  'You are a helpful assistant.',
  'You are an AI assistant helping with coding tasks.',
  'You are a professional writing assistant.',
];
