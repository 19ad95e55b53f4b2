// Worker thread for BytePool: payload fills, restamps, copies and verification on shared memory, so
// large synchronous passes over a buffer never stall the engine's event loop.

import { parentPort, workerData } from 'node:worker_threads';
import { PayloadPool } from './payload.ts';
import type { ByteJob, ByteWorkerInit, ByteWorkerReply, SharedBufferRef } from './byte-protocol.ts';

if (parentPort === null) throw new Error('byte-worker.ts must run as a worker thread');
const port = parentPort;
const init = workerData as ByteWorkerInit;
const pool = PayloadPool.fromShared(init.poolSab);

function view(ref: SharedBufferRef): Uint8Array {
  return new Uint8Array(ref.sab, ref.byteOffset, ref.length);
}

port.on('message', (job: ByteJob) => {
  const startNs = process.hrtime.bigint();
  let reply: ByteWorkerReply;
  try {
    if (job.op === 'fill') {
      pool.fill(view(job.dest), job.keyHash, job.entryOffsetBytes);
      reply = { type: 'done', id: job.id, busyNs: 0 };
    } else if (job.op === 'stamp') {
      pool.stamp(view(job.dest), job.keyHash, job.entryOffsetBytes);
      reply = { type: 'done', id: job.id, busyNs: 0 };
    } else if (job.op === 'copy') {
      view(job.dst).set(view(job.src));
      reply = { type: 'done', id: job.id, busyNs: 0 };
    } else {
      const result = pool.verify(view(job.src), job.keyHash, job.entryOffsetBytes);
      reply = { type: 'done', id: job.id, busyNs: 0, result };
    }
  } catch (err) {
    const e = err instanceof Error ? err : new Error(String(err));
    reply = { type: 'failed', id: job.id, busyNs: 0, error: { name: e.name, message: e.message } };
  }
  reply.busyNs = Number(process.hrtime.bigint() - startNs);
  port.postMessage(reply);
});

port.postMessage({ type: 'ready' } satisfies ByteWorkerReply);
