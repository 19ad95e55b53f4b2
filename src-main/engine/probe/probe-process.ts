// Entry point of the probe's own process (see probe-protocol.ts). The probe needs libuv's thread
// pool sized to its I/Os in flight, and libuv reads UV_THREADPOOL_SIZE once, when the pool starts:
// so the host starts this process with the variable set, as it does for the engine. Cancel, the
// host going away, SIGINT or SIGTERM stop the probe, which removes its files before exiting.

import { toErrorData } from '../../../src-shared/domain/errors.ts';
import { HostToProbeSchema, type ProbeToHost } from './probe-protocol.ts';
import { runRawLimitProbe } from './raw-limit-probe.ts';

function send(message: ProbeToHost): Promise<void> {
  return new Promise((resolve) => {
    if (!process.send || !process.connected) return resolve();
    process.send(message, undefined, {}, () => resolve());
  });
}

function main(): void {
  const abort = new AbortController();
  let started = false;
  process.on('message', (raw: unknown) => {
    const parsed = HostToProbeSchema.safeParse(raw);
    if (!parsed.success) {
      void send({ type: 'error', error: { code: 'PROTOCOL', message: 'malformed message from the host' } }).then(() => process.exit(1));
      return;
    }
    const msg = parsed.data;
    if (msg.type === 'cancel') {
      abort.abort();
      return;
    }
    if (started) return;
    started = true;
    runRawLimitProbe(msg.options, { signal: abort.signal, onProgress: (progress) => void send({ type: 'progress', progress }) })
      .then((result) => send({ type: 'result', result }))
      .catch((err: unknown) => send({ type: 'error', error: toErrorData(err) }))
      .finally(() => process.disconnect?.());
  });
  process.on('disconnect', () => abort.abort());
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => abort.abort());
}

if (import.meta.main !== false) {
  if (process.send === undefined) {
    process.stderr.write('probe-process: start me through `kvbench probe` (no IPC channel)\n');
    process.exit(2);
  }
  main();
}
