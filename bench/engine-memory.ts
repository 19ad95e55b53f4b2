// The engine's memory over a long, heavily loaded run: many users of tiny-1b beside a 1 GiB CPU tier,
// an open loop whose backlog grows. What the engine holds outside its JS heap must stay within the
// buffers it reserved at start (kvbench.engine_health.memory.fixed_buffers: the CPU tier's arena, the
// storage I/O buffers, staging, the payload pool) plus a runtime allowance, at every timeline sample
// (bench/lib/verdicts.ts: memoryBoundVerdict); a MISS exits 1. The JS heap is printed beside: it
// holds the open loop's queue, which grows with the backlog.
//
//   node bench/engine-memory.ts [--dir DIR (default: a directory under /var/tmp)] [--users 500]
//        [--duration 120] [--model tiny-1b] [--cpu-mem-gb 1] [--json FILE]

import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { cleanupAll, onCleanup } from './lib/cleanup.ts';
import { runKvbench, type KvbenchRun } from './lib/runners.ts';
import { fmt, table } from './lib/stats.ts';
import { machineLine, setupDiskTarget } from './lib/targets.ts';
import { memoryBoundVerdict } from './lib/verdicts.ts';

const { values } = parseArgs({
  options: {
    dir: { type: 'string' },
    users: { type: 'string', default: '500' },
    duration: { type: 'string', default: '120' },
    model: { type: 'string', default: 'tiny-1b' },
    'cpu-mem-gb': { type: 'string', default: '1' },
    seed: { type: 'string', default: '7' },
    json: { type: 'string' },
  },
});

const MiB = 1024 * 1024;
/** Code, thread stacks, the worker threads' heaps, the JS heaps' free space: measured at 250-350 MiB. */
const RUNTIME_ALLOWANCE_BYTES = 384 * MiB;

async function main(): Promise<void> {
  console.log(`engine-memory: ${machineLine()}`);
  let dir: string;
  if (values.dir) {
    dir = fs.mkdtempSync(`${values.dir.replace(/\/$/, '')}/kvb-bench-mem-`);
    onCleanup(`rm -r ${dir}`, () => fs.rmSync(dir, { recursive: true, force: true }));
  } else {
    dir = setupDiskTarget({ parent: '/var/tmp', tag: 'mem' }).dir;
  }
  const args = [
    '--model', values.model!, '--num-users', values.users!, '--duration', values.duration!,
    '--cpu-mem-gb', values['cpu-mem-gb']!, '--gpu-mem-gb', '0', '--generation-mode', 'fast',
    '--seed', values.seed!, '--cache-dir', dir,
  ];
  console.log(`kvbench run ${args.join(' ')}`);
  let k: KvbenchRun;
  try {
    k = await runKvbench(args, { deviceDir: dir, tag: 'mem' });
  } finally {
    cleanupAll();
  }
  const kv = k.results.kvbench;
  const memory = kv.engine_health.memory;
  if (!memory) throw new Error('the results carry no engine_health.memory (a kvbench before 0.7.1?)');
  const b = memory.fixed_buffers;
  const points = kv.timeline.filter((p) => p.rss_bytes !== undefined && p.heap_used_bytes !== undefined);
  const every = Math.max(1, Math.floor(points.length / 12));
  const mib = (x: number | null | undefined): string => (x === null || x === undefined ? '-' : fmt(x / MiB, 0));
  console.log(
    `reserved at start: ${mib(b.total_bytes)} MiB (CPU tier arena ${mib(b.cpu_tier_arena_bytes)}, storage I/O ${mib(b.storage_io_buffers_bytes)}, ` +
      `CPU read staging ${mib(b.cpu_read_staging_bytes)}, payload ${mib(b.payload_pool_bytes)})`,
  );
  console.log(
    table([
      ['elapsed s', 'RSS MiB', 'JS heap MiB', 'RSS − heap MiB', 'array buffers MiB', 'workers heap MiB', 'queue'],
      ...points
        .filter((_, i) => i % every === 0 || i === points.length - 1)
        .map((p) => [
          fmt(p.elapsed_ns / 1e9, 0), mib(p.rss_bytes), mib(p.heap_used_bytes), mib(p.rss_bytes! - p.heap_used_bytes!), mib(p.array_buffers_bytes),
          mib(p.byte_workers_heap_used_bytes), String(p.queue_depth),
        ]),
    ]),
  );
  console.log(
    `peak RSS ${mib(kv.engine_health.peak_rss_bytes)} MiB (${fmt(kv.engine_health.peak_rss_bytes / b.total_bytes, 2)}× reserved), CPU tier held ${mib(kv.tiers.cpu.peak_held_bytes)} MiB, ` +
      `arena overflow chunks ${kv.tiers.cpu.arena_overflow_chunks ?? '-'}, requests ${k.results.requests_completed}, CPU-s ${fmt(k.run.cpuUserS + k.run.cpuSystemS, 1)}`,
  );
  const verdict = memoryBoundVerdict(
    points.map((p) => ({ rssBytes: p.rss_bytes!, heapUsedBytes: p.heap_used_bytes! })),
    b.total_bytes,
    RUNTIME_ALLOWANCE_BYTES,
  );
  console.log(`memory outside the JS heap → ${verdict.line}`);
  if (values.json) {
    fs.writeFileSync(values.json, `${JSON.stringify({ machine: machineLine(), args, pass: verdict.pass, verdict: verdict.line, memory, timeline: points }, null, 2)}\n`);
  }
  if (!verdict.pass) process.exitCode = 1;
}

await main();
