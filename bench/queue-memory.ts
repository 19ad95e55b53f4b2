// What the open loop's backlog costs in heap: bytes per queued arrival when the drive is slower than
// the offered load (the synthetic users never wait for their previous request, so arrivals pile up in
// the request queue: 1,000 users offer about 2,400 requests a second; a paced replay likewise).
//
// Side by side in one run, each in its own child process (a fresh heap, measured after a full GC):
//   - full:    every arrival queued as a full request (the source's next(): ids, keys, the keys of the
//              earlier turns it reloads, prefix blocks), as the scheduler queued synthetic arrivals up to
//              0.7.0 and replayed ones up to 0.7.0's session 14;
//   - compact: the source's compact arrival (nextQueued()), its strings built when a worker takes it, as
//              the scheduler queues them now.
// Workloads: the synthetic users (1,000, multi-turn, prefix caching); a ShareGPT replay, multi-turn
// (a generated dataset of 2,000 conversations of 1–8 turns, 100 users, paced); the real Mooncake
// conversation trace (prefix blocks; skipped when the public traces are not beside the checkout).
// Each is counted as the heap grown with the arrivals queued less the heap grown by offering the same
// arrivals and dropping them (what the source keeps whatever the queue: counts, the prefix-block keys a
// replay remembers for its ideal hit rate), printed beside in brackets.
// Prints bytes per queued request for each, the ratio, and what a one-hour backlog at --rate arrivals
// per second would hold. Nothing gates on it: it is a measurement.
//
//   node bench/queue-memory.ts [--users 1000] [--queued 70000,280000] [--rate 2400] [--workloads synthetic,sharegpt,mooncake]
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { RunOptionsSchema, type RunOptionsInput } from '../src-shared/domain/run-options.ts';
import { SyntheticWorkload } from '../src-main/engine/workload/synthetic-workload.ts';
import { RequestQueue } from '../src-main/engine/workload/request-queue.ts';
import { DEFAULT_WORKLOAD_PROFILE } from '../src-main/engine/workload/workload-profile.ts';
import { createWorkloadSource } from '../src-main/engine/workload/sources/create-source.ts';
import type { WorkloadSource } from '../src-main/engine/workload/workload-source.ts';

const { values: args } = parseArgs({
  options: {
    users: { type: 'string', default: '1000' },
    queued: { type: 'string', default: '70000,280000' },
    rate: { type: 'string', default: '2400' },
    workloads: { type: 'string', default: 'synthetic,sharegpt,mooncake' },
    child: { type: 'string' },
    dataset: { type: 'string' },
  },
});
const users = Number(args.users);
const MOONCAKE = fileURLToPath(new URL('../../shared/data/traces/mooncake_conversation_trace.jsonl', import.meta.url));

async function source(workload: string): Promise<WorkloadSource> {
  if (workload === 'synthetic') {
    return new SyntheticWorkload({ seed: 1, numUsers: users, multiTurn: true, prefixCaching: true, mode: 'standard', ragDocuments: null, prepopulatedKeys: [] });
  }
  const options: RunOptionsInput =
    workload === 'sharegpt' ? { datasetPath: args.dataset, numUsers: 100, requestRate: 2400, replayCycles: 0 } : { datasetPath: MOONCAKE, traceSpeedup: 1, replayCycles: 0 };
  return createWorkloadSource({
    options: RunOptionsSchema.parse(options),
    seed: 1,
    profile: DEFAULT_WORKLOAD_PROFILE,
    ragDocuments: null,
    prepopulatedKeys: [],
    log: () => {},
  });
}

if (args.child) {
  const [workload, path_, count] = args.child.split(':');
  const gc = (globalThis as { gc?: () => void }).gc!;
  const w = await source(workload);
  const ready = (w as { ready?: () => Promise<void> }).ready?.bind(w);
  const q = new RequestQueue();
  gc();
  const before = process.memoryUsage().heapUsed;
  for (let i = 0; i < Number(count); i++) {
    if (ready) await ready();
    const r = path_ === 'full' ? w.next() : w.nextQueued!();
    r.submitNs = process.hrtime.bigint();
    // "offered": the same arrivals offered and dropped, for what the source itself keeps (its counts,
    // the prefix-block keys it remembers for the ideal hit rate): not the queue's.
    if (path_ !== 'offered') q.push(r);
  }
  gc();
  const heapBytes = process.memoryUsage().heapUsed - before;
  process.stdout.write(JSON.stringify({ depth: path_ === 'offered' ? Number(count) : q.depth, heapBytes }));
  process.exit(0);
}

/** A ShareGPT file of `n` conversations of 1–8 turns (token counts only matter, so short texts). */
function writeShareGpt(file: string, n: number): void {
  const convs = Array.from({ length: n }, (_, i) => ({
    id: `sharegpt_${i.toString(36)}`,
    conversations: Array.from({ length: 1 + ((i * 7) % 8) }, (_, t) => [
      { from: 'human', value: `question ${t} `.repeat(20 + ((i + t) % 50)) },
      { from: 'gpt', value: `answer ${t} `.repeat(10 + ((i * t) % 40)) },
    ]).flat(),
  }));
  fs.writeFileSync(file, JSON.stringify(convs));
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvb-queue-memory-'));
const dataset = path.join(dir, 'sharegpt.json');
writeShareGpt(dataset, 2000);

const measure = (workload: string, path_: string, count: number): { depth: number; heapBytes: number } =>
  JSON.parse(
    execFileSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), '--users', String(users), '--dataset', dataset, '--child', `${workload}:${path_}:${count}`], {
      encoding: 'utf8',
    }),
  ) as { depth: number; heapBytes: number };

const LABELS: Record<string, string> = {
  synthetic: `synthetic, ${users} users, multi-turn, prefix caching`,
  sharegpt: 'ShareGPT replay, multi-turn, 100 users (2,000 conversations of 1–8 turns)',
  mooncake: 'Mooncake conversation trace replay (prefix blocks)',
};
const ratePerS = Number(args.rate);
console.log('heap after a full GC, per queued request');
try {
  for (const workload of args.workloads.split(',')) {
    if (workload === 'mooncake' && !fs.existsSync(MOONCAKE)) {
      console.log(`\n${LABELS[workload]}: skipped, ${MOONCAKE} is not there`);
      continue;
    }
    console.log(`\n${LABELS[workload]}`);
    console.log('queued      full B/req   compact B/req   full ÷ compact   (source alone B/req, not counted)');
    let compactBytesPerRequest = 0;
    for (const count of args.queued.split(',').map(Number)) {
      const offered = measure(workload, 'offered', count);
      const full = measure(workload, 'full', count);
      const compact = measure(workload, 'compact', count);
      // What the queue holds: the heap grown with the arrivals queued, less what offering them alone grew.
      compactBytesPerRequest = (compact.heapBytes - offered.heapBytes) / compact.depth;
      const fullPer = (full.heapBytes - offered.heapBytes) / full.depth;
      console.log(
        `${String(count).padEnd(10)}  ${fullPer.toFixed(0).padStart(10)}   ${compactBytesPerRequest.toFixed(0).padStart(13)}   ${(fullPer / compactBytesPerRequest).toFixed(1).padStart(14)}×` +
          `   (${(offered.heapBytes / count).toFixed(0)})`,
      );
    }
    const hourQueued = ratePerS * 3600;
    console.log(`a one-hour backlog at ${ratePerS} arrivals/s: ${hourQueued.toLocaleString('en-US')} queued ≈ ${((hourQueued * compactBytesPerRequest) / 1e9).toFixed(2)} GB compact`);
  }
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
