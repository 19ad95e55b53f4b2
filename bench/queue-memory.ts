// What the open loop's backlog costs in heap: bytes per queued arrival when the drive is slower than
// the offered load (the synthetic users never wait for their previous request, so arrivals pile up in
// the request queue: 1,000 users offer about 2,400 requests a second).
//
// Side by side in one run, each in its own child process (a fresh heap, measured after a full GC):
//   - full:    every arrival queued as a full request (SyntheticWorkload.next(): ids, keys, the keys of
//              the earlier turns it reloads), as the scheduler queued them up to 0.7.0;
//   - compact: the arrival kept compact (SyntheticWorkload.nextQueued()), its strings built when a worker
//              takes it, as the scheduler queues them now.
// Prints bytes per queued request for each, the ratio, and what a one-hour backlog at --rate arrivals
// per second would hold. Nothing gates on it: it is a measurement.
//
//   node bench/queue-memory.ts [--users 1000] [--queued 70000,280000] [--rate 2400]
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { SyntheticWorkload } from '../src-main/engine/workload/synthetic-workload.ts';
import { RequestQueue } from '../src-main/engine/workload/request-queue.ts';

const { values: args } = parseArgs({
  options: {
    users: { type: 'string', default: '1000' },
    queued: { type: 'string', default: '70000,280000' },
    rate: { type: 'string', default: '2400' },
    child: { type: 'string' },
  },
});
const users = Number(args.users);

if (args.child) {
  const [path, count] = args.child.split(':');
  const gc = (globalThis as { gc?: () => void }).gc!;
  const w = new SyntheticWorkload({ seed: 1, numUsers: users, multiTurn: true, prefixCaching: true, mode: 'standard', ragDocuments: null, prepopulatedKeys: [] });
  const q = new RequestQueue();
  gc();
  const before = process.memoryUsage().heapUsed;
  for (let i = 0; i < Number(count); i++) {
    const r = path === 'full' ? w.next() : w.nextQueued();
    r.submitNs = process.hrtime.bigint();
    q.push(r);
  }
  gc();
  const heapBytes = process.memoryUsage().heapUsed - before;
  process.stdout.write(JSON.stringify({ depth: q.depth, heapBytes }));
  process.exit(0);
}

const measure = (path: string, count: number): { depth: number; heapBytes: number } =>
  JSON.parse(
    execFileSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), '--users', String(users), '--child', `${path}:${count}`], { encoding: 'utf8' }),
  ) as { depth: number; heapBytes: number };

const ratePerS = Number(args.rate);
console.log(`${users} users, multi-turn, prefix caching; heap after a full GC, per queued request`);
console.log('queued      full B/req   compact B/req   full ÷ compact');
let compactBytesPerRequest = 0;
for (const count of args.queued.split(',').map(Number)) {
  const full = measure('full', count);
  const compact = measure('compact', count);
  compactBytesPerRequest = compact.heapBytes / compact.depth;
  const fullPer = full.heapBytes / full.depth;
  console.log(`${String(count).padEnd(10)}  ${fullPer.toFixed(0).padStart(10)}   ${compactBytesPerRequest.toFixed(0).padStart(13)}   ${(fullPer / compactBytesPerRequest).toFixed(1).padStart(14)}×`);
}
const hourQueued = ratePerS * 3600;
console.log(`a one-hour backlog at ${ratePerS} arrivals/s: ${hourQueued.toLocaleString('en-US')} queued ≈ ${((hourQueued * compactBytesPerRequest) / 1e9).toFixed(2)} GB compact`);
