// Entry point of the probe's own process (see probe-protocol.ts). The probe needs libuv's thread
// pool sized to its I/Os in flight, and libuv reads UV_THREADPOOL_SIZE once, when the pool starts:
// so the host starts this process with the variable set, as it does for the engine. Cancel, the
// host going away, SIGINT or SIGTERM stop the probe, which removes its files before exiting.

import { enableCompileCache } from '../../util/compile-cache.ts';
import type { ProbeToHost } from './probe-protocol.ts';

/**
 * The probe's modules, imported once the compile cache is on (below): a static import is compiled
 * before this file's first line runs, so the cache would never see them.
 */
async function probeModules() {
  const [{ toErrorData }, { HostToProbeSchema }, { runRawLimitProbe }] = await Promise.all([
    import('../../../src-shared/domain/errors.ts'),
    import('./probe-protocol.ts'),
    import('./raw-limit-probe.ts'),
  ]);
  return { toErrorData, HostToProbeSchema, runRawLimitProbe };
}

function send(message: ProbeToHost): Promise<void> {
  return new Promise((resolve) => {
    if (!process.send || !process.connected) return resolve();
    process.send(message, undefined, {}, () => resolve());
  });
}

function main(): void {
  const abort = new AbortController();
  // The listener is attached now, so that no message sent while the modules load is lost; each
  // waits on the same promise, so they are handled in the order they came.
  const modules = probeModules();
  let started = false;
  const onMessage = ({ toErrorData, HostToProbeSchema, runRawLimitProbe }: Awaited<typeof modules>, raw: unknown): void => {
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
  };
  process.on('message', (raw: unknown) => void modules.then((m) => onMessage(m, raw)));
  process.on('disconnect', () => abort.abort());
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => abort.abort());
}

if (import.meta.main !== false) {
  if (process.send === undefined) {
    process.stderr.write('probe-process: start me through `kvbench probe` (no IPC channel)\n');
    process.exit(2);
  }
  // Before the probe's modules load (main imports them): the desktop app starts this process
  // without bin/kvbench.js, which turns the cache on for the CLI's (where this finds it on already).
  enableCompileCache();
  main();
}
