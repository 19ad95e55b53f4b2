// Copy worker thread for the GPU tier: opens its own instance of the driver (koffi works per
// thread), makes each device's primary context current here, and runs host↔device copies
// synchronously, so the engine's event loop never waits on a DMA transfer.

import { parentPort, workerData } from 'node:worker_threads';
import { CudaError } from './cuda-driver.ts';
import type { CudaDriver } from './cuda-driver.ts';
import { CopyExecutor } from './copy-executor.ts';
import { GATE_IN_FLIGHT, GATE_STOP, type CopyErrorData, type CopyWorkerInit, type CopyWorkerReply, type CopyWorkerRequest } from './copy-protocol.ts';

if (parentPort === null) throw new Error('copy-worker.ts must run as a worker thread');
const port = parentPort;
const init = workerData as CopyWorkerInit;
const gate = new Int32Array(init.gate);

function errorData(err: unknown): CopyErrorData {
  const e = err instanceof Error ? err : new Error(String(err));
  const data: CopyErrorData = { name: e.name, message: e.message };
  if (err instanceof CudaError) {
    data.cudaCode = err.cudaCode;
    data.cudaName = err.cudaName;
    data.fn = err.fn;
  }
  return data;
}

const send = (m: CopyWorkerReply): void => port.postMessage(m);

async function start(): Promise<void> {
  let executor: CopyExecutor;
  try {
    const mod = (await import(init.driver.moduleUrl)) as Record<string, (options: unknown) => Promise<CudaDriver> | CudaDriver>;
    const open = mod[init.driver.exportName];
    if (typeof open !== 'function') throw new Error(`${init.driver.moduleUrl} has no export ${init.driver.exportName}`);
    const driver = await open(init.driver.options);
    driver.cuInit(0);
    executor = new CopyExecutor(driver, init.devices);
  } catch (err) {
    send({ type: 'init-failed', error: errorData(err) });
    return;
  }
  port.on('message', (m: CopyWorkerRequest) => {
    if (m.type === 'close') {
      executor.close();
      send({ type: 'closed' });
      port.close();
      return;
    }
    // Counted in before the stop flag is read: the exit hook that sets the flag then waits for this
    // count to reach 0, so no copy can start, or still run, while it frees the memory it copies.
    Atomics.add(gate, GATE_IN_FLIGHT, 1);
    try {
      if (Atomics.load(gate, GATE_STOP) !== 0) {
        send({ type: 'failed', id: m.id, error: { name: 'GpuCopyError', message: 'the process is exiting: no more copies' } });
        return;
      }
      const host = new Uint8Array(m.host.sab, m.host.byteOffset, m.host.length);
      const { startNs, endNs } = executor.run(m.direction, host, m.segments);
      send({ type: 'done', id: m.id, startNs, endNs });
    } catch (err) {
      send({ type: 'failed', id: m.id, error: errorData(err) });
    } finally {
      Atomics.sub(gate, GATE_IN_FLIGHT, 1);
      Atomics.notify(gate, GATE_IN_FLIGHT);
    }
  });
  send({ type: 'ready' });
}

void start();
