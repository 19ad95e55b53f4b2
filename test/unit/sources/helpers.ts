// Shared by the workload-source tests: run contexts, temp files the tests write, the real traces.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { RunOptionsSchema, type RunOptionsInput } from '../../../src-shared/domain/run-options.ts';
import type { KvRequest } from '../../../src-main/engine/workload/synthetic-workload.ts';
import { DEFAULT_WORKLOAD_PROFILE, type WorkloadProfile } from '../../../src-main/engine/workload/workload-profile.ts';
import type { SourceContext } from '../../../src-main/engine/workload/sources/source-context.ts';
import type { WorkloadSource } from '../../../src-main/engine/workload/workload-source.ts';

export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** The public traces beside the checkout (read-only; never copied into the repository). */
export const TRACES_DIR = path.resolve(REPO_ROOT, '../shared/data/traces');
export const MOONCAKE_CONVERSATION = path.join(TRACES_DIR, 'mooncake_conversation_trace.jsonl');
export const MOONCAKE_SYNTHETIC = path.join(TRACES_DIR, 'mooncake_synthetic_trace.jsonl');
export const AZURE_CONV = path.join(TRACES_DIR, 'azure_llm_2023_conv.csv');
export const AZURE_CODE = path.join(TRACES_DIR, 'azure_llm_2023_code.csv');
export const HAVE_TRACES = fs.existsSync(MOONCAKE_CONVERSATION) && fs.existsSync(AZURE_CONV);
/** Why the real-trace tests are skipped when HAVE_TRACES is false (the traces are not part of the repository). */
export const NO_TRACES_WHY = `the public traces are not at ${TRACES_DIR} (beside the checkout, not in it)`;

export interface Logged {
  level: string;
  message: string;
}

export function makeCtx(options: RunOptionsInput, extra: Partial<SourceContext> = {}): SourceContext & { logged: Logged[] } {
  const logged: Logged[] = [];
  return {
    options: RunOptionsSchema.parse({ numUsers: 4, ...options }),
    seed: 7,
    profile: structuredClone(DEFAULT_WORKLOAD_PROFILE) as WorkloadProfile,
    ragDocuments: null,
    prepopulatedKeys: [],
    log: (level, message) => logged.push({ level, message }),
    ...extra,
    logged,
  };
}

/** Takes up to `max` requests in arrival order, waiting for read-ahead where the source needs it. */
export async function takeAll(src: WorkloadSource, max = Number.POSITIVE_INFINITY): Promise<KvRequest[]> {
  const out: KvRequest[] = [];
  const ready = (src as { ready?: () => Promise<void> }).ready?.bind(src);
  while (out.length < max) {
    if (ready) await ready();
    if (src.peekArrivalNs() === Number.POSITIVE_INFINITY) break;
    out.push(src.next());
  }
  return out;
}

const dirs: string[] = [];
export function tempDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'kvb-src-'));
  dirs.push(d);
  return d;
}
export function removeTempDirs(): void {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
}

export function writeFile(dir: string, name: string, content: string | Buffer): string {
  const p = path.join(dir, name);
  fs.writeFileSync(p, content);
  return p;
}

/** A ShareGPT-format conversation: `turns` (human, gpt) pairs with texts of the given lengths. */
export function conversation(id: string, turns: [number, number][], extra: { from: string; value: string }[] = []): unknown {
  const msgs: { from: string; value: string }[] = [...extra];
  turns.forEach(([h, g], i) => {
    msgs.push({ from: 'human', value: `${'h'.repeat(Math.max(0, h - 1))}${i}` });
    msgs.push({ from: 'gpt', value: `${'g'.repeat(Math.max(0, g - 1))}${i}` });
  });
  return { id, conversations: msgs };
}

/** A ShareGPT JSON file of `n` conversations with 1..4 turns each (deterministic). */
export function writeShareGpt(dir: string, n: number, name = 'sharegpt.json', pretty = false): string {
  const convs = Array.from({ length: n }, (_, i) =>
    conversation(
      `conv${i}`,
      Array.from({ length: 1 + (i % 4) }, (_, t) => [40 + 13 * i + 7 * t, 20 + 5 * t] as [number, number]),
    ),
  );
  return writeFile(dir, name, pretty ? JSON.stringify(convs, null, 2) : JSON.stringify(convs));
}

export const BURST_HEADER = 'Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type';

/** A BurstGPT CSV with rows at the given timestamps (seconds). */
export function writeBurst(dir: string, rows: [number, number, number][], name = 'burst.csv'): string {
  const lines = [BURST_HEADER, ...rows.map(([t, req, resp]) => `${t},ChatGPT,${req},${resp},${req + resp},Conversation log`)];
  return writeFile(dir, name, `${lines.join('\n')}\n`);
}
