// Messages between BytePool (main thread) and byte-worker.ts. Buffers travel as a reference into
// shared memory, never as copies: posting a SharedArrayBuffer shares it.

import type { VerifyResult } from './payload.ts';

export interface SharedBufferRef {
  sab: SharedArrayBuffer;
  byteOffset: number;
  length: number;
}

export interface ByteWorkerInit {
  poolSab: SharedArrayBuffer;
}

export type ByteJob =
  | { id: number; op: 'fill'; dest: SharedBufferRef; keyHash: bigint; entryOffsetBytes: number }
  | { id: number; op: 'stamp'; dest: SharedBufferRef; keyHash: bigint; entryOffsetBytes: number }
  | { id: number; op: 'copy'; src: SharedBufferRef; dst: SharedBufferRef }
  | { id: number; op: 'verify'; src: SharedBufferRef; keyHash: bigint; entryOffsetBytes: number };

export type ByteWorkerReply =
  | { type: 'ready' }
  | { type: 'done'; id: number; busyNs: number; result?: VerifyResult }
  | { type: 'failed'; id: number; busyNs: number; error: { name: string; message: string } };
