// Messages between GpuCopyEngine (the engine's main thread) and copy-worker.ts. Host buffers travel
// as references into shared memory (posting a SharedArrayBuffer shares it); device addresses as
// numbers.

import type { WorkerDriverSpec } from './cuda-driver.ts';
import type { CopyDirection, CopySegment } from './copy-executor.ts';

export interface CopyWorkerInit {
  driver: WorkerDriverSpec;
  /** Device ordinals this worker copies to and from. */
  devices: number[];
  /**
   * Shared by every worker and the engine: Int32 [0] = stop (set on the crash path: start no more
   * copies), [1] = copies inside the driver now. See WorkerCopyEngine.stopForExit.
   */
  gate: SharedArrayBuffer;
}

export const GATE_STOP = 0;
export const GATE_IN_FLIGHT = 1;

export interface CopyJob {
  type: 'copy';
  id: number;
  direction: CopyDirection;
  host: { sab: SharedArrayBuffer; byteOffset: number; length: number };
  segments: CopySegment[];
}

export interface CopyErrorData {
  name: string;
  message: string;
  /** Set when the driver returned an error (the CUresult and its name). */
  cudaCode?: number;
  cudaName?: string;
  fn?: string;
}

export type CopyWorkerRequest = CopyJob | { type: 'close' };

export type CopyWorkerReply =
  | { type: 'ready' }
  | { type: 'init-failed'; error: CopyErrorData }
  /** The copy's own interval, on process.hrtime.bigint()'s clock (one clock for every thread of the process). */
  | { type: 'done'; id: number; startNs: bigint; endNs: bigint }
  | { type: 'failed'; id: number; error: CopyErrorData }
  | { type: 'closed' };
