// Entry point of one engine process (one trial): a Node child forked by the host, or later an
// Electron utility process. It speaks src-shared/engine-protocol.ts with its parent and runs
// `runBenchmark` once. It must never import electron.
//
// Lifecycle: hello → (host) start → progress/log/heartbeat … → result | error → exit.
// Cancel, SIGINT, SIGTERM, SIGHUP or the parent going away abort the run gracefully; a second SIGINT
// or SIGTERM exits at once (130 / 143). A SIGHUP never does: it reaches the engine too when a
// dropped SSH session hangs up the CLI's whole process group, and the CLI stops the run gracefully. An engine whose parent is gone and that does not exit by
// itself (its event loop wedged) is SIGKILLed by its watchdog thread.
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import {
  ENGINE_PROTOCOL_VERSION,
  HostToEngineMessageSchema,
  PROGRESS_INTERVAL_MS,
  toEngineErrorData,
  type EngineErrorData,
  type EngineToHostMessage,
  type LogLevel,
  type ProgressEvent,
  type RunOutcome,
} from '../../src-shared/engine-protocol.ts';
import { createThrottle } from '../host/throttle.ts';
import { enableCompileCache } from '../util/compile-cache.ts';
import { startOrphanWatchdog } from './orphan-watchdog.ts';

/** What `runBenchmark` receives besides its options. Import these types with `import type` only. */
export interface EngineRunContext {
  /** Call as often as convenient; this process throttles to ≤ 10 per second. */
  onProgress: (progress: ProgressEvent) => void;
  onLog: (level: LogLevel, message: string) => void;
  /** Aborted = stop gracefully and return partial results. */
  signal: AbortSignal;
}
export type RunBenchmark = (options: unknown, ctx: EngineRunContext) => Promise<RunOutcome>;

const HEARTBEAT_INTERVAL_MS = 1_000;
/** After the parent disappears, give the benchmark this long to clean up, then exit regardless. */
const ORPHAN_EXIT_MS = 5_000;
/** The watchdog thread's check of the parent, and its grace beyond ORPHAN_EXIT_MS before SIGKILL. */
const ORPHAN_CHECK_INTERVAL_MS = 500;
const ORPHAN_KILL_AFTER_MS = ORPHAN_EXIT_MS + 2_000;
const EXIT_CODE_ON_SECOND_SIGNAL = { SIGINT: 130, SIGTERM: 143 } as const;

interface ParentChannel {
  send(message: EngineToHostMessage): Promise<void>;
  onMessage(listener: (message: unknown) => void): void;
  onDisconnect(listener: () => void): void;
}

function nodeIpcChannel(): ParentChannel | undefined {
  if (process.send === undefined) return undefined;
  return {
    send: (message) =>
      new Promise((resolve, reject) => {
        if (!process.connected) return resolve(); // nobody left to tell
        process.send!(message, undefined, {}, (err) => (err ? reject(err) : resolve()));
      }),
    onMessage: (listener) => process.on('message', listener),
    onDisconnect: (listener) => process.on('disconnect', listener),
  };
}

/** Electron's utility process talks through `process.parentPort` (typed here without electron). */
interface ParentPort {
  postMessage(message: unknown): void;
  on(event: 'message', listener: (event: { data: unknown }) => void): void;
}

function electronParentPortChannel(): ParentChannel | undefined {
  const port = (process as { parentPort?: ParentPort }).parentPort;
  if (port === undefined) return undefined;
  return {
    send: async (message) => port.postMessage(message),
    onMessage: (listener) => port.on('message', (event) => listener(event.data)),
    onDisconnect: () => {}, // Electron ends a utility process together with its parent
  };
}

async function loadRunBenchmark(): Promise<RunBenchmark> {
  // Tests substitute a fake engine by absolute path.
  const override = process.env.KVBENCH_ENGINE_MODULE;
  const url = override ? pathToFileURL(override).href : new URL('./benchmark.ts', import.meta.url).href;
  const mod = (await import(url)) as { runBenchmark?: unknown };
  if (typeof mod.runBenchmark !== 'function') throw new Error(`engine module ${url} does not export runBenchmark()`);
  return mod.runBenchmark as RunBenchmark;
}

function cancellation(reason: string): Error {
  return Object.assign(new Error(reason), { name: 'AbortError', code: 'CANCELLED' });
}

function main(channel: ParentChannel): void {
  const startedAtNs = process.hrtime.bigint();
  const controller = new AbortController();
  let runStarted = false;
  let finished = false;

  const send = (message: EngineToHostMessage): void => {
    if (finished) return; // nothing may follow the result or error
    channel.send(message).catch(() => {}); // a closed channel is handled by onDisconnect
  };

  const heartbeat = setInterval(() => {
    send({ type: 'heartbeat', uptimeNs: Number(process.hrtime.bigint() - startedAtNs) });
  }, HEARTBEAT_INTERVAL_MS);
  heartbeat.unref(); // the IPC channel, not the heartbeat, keeps an idle engine alive

  const abort = (reason: string): void => {
    if (!controller.signal.aborted) controller.abort(cancellation(reason));
  };

  /** Sends the terminal message, waits until it is written, then exits. */
  const finish = async (message: EngineToHostMessage, exitCode: number): Promise<void> => {
    if (finished) return;
    finished = true;
    clearInterval(heartbeat);
    try {
      await channel.send(message);
    } catch (err) {
      // e.g. a result that cannot be serialized: report that instead
      exitCode = 1;
      const error: EngineErrorData = { code: 'INTERNAL', message: `could not send ${message.type}: ${toEngineErrorData(err).message}` };
      await channel.send({ type: 'error', error }).catch(() => {});
    }
    process.exit(exitCode);
  };

  const fail = (error: EngineErrorData): Promise<void> => finish({ type: 'error', error }, 1);

  const run = async (options: unknown): Promise<void> => {
    const progress = createThrottle<ProgressEvent>((p) => send({ type: 'progress', progress: p }), PROGRESS_INTERVAL_MS);
    try {
      const runBenchmark = await loadRunBenchmark();
      const outcome = await runBenchmark(options, {
        onProgress: (p) => progress.push(p),
        onLog: (level, message) => send({ type: 'log', level, message }),
        signal: controller.signal,
      });
      progress.flush(); // the last progress always precedes the result
      await finish({ type: 'result', outcome }, 0);
    } catch (err) {
      progress.flush();
      await fail(toEngineErrorData(err));
    }
  };

  channel.onMessage((raw) => {
    const parsed = HostToEngineMessageSchema.safeParse(raw);
    if (!parsed.success) {
      void fail({ code: 'PROTOCOL', message: `invalid message from host: ${z.prettifyError(parsed.error)}` });
      return;
    }
    const message = parsed.data;
    if (message.type === 'cancel') return abort(message.reason);
    if (message.version !== ENGINE_PROTOCOL_VERSION) {
      void fail({ code: 'PROTOCOL', message: `host speaks protocol ${message.version}, engine speaks ${ENGINE_PROTOCOL_VERSION}` });
    } else if (runStarted) {
      void fail({ code: 'PROTOCOL', message: 'start received twice' });
    } else {
      runStarted = true;
      void run(message.options);
    }
  });

  channel.onDisconnect(() => {
    abort('host disconnected');
    if (!runStarted) process.exit(1);
    // A run that ignores the abort must not outlive its host, still writing to the target.
    setTimeout(() => process.exit(1), ORPHAN_EXIT_MS).unref();
  });

  let signalsReceived = 0;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      signalsReceived += 1;
      if (signalsReceived === 1) abort(`the engine received ${signal}`);
      else process.exit(EXIT_CODE_ON_SECOND_SIGNAL[signal]);
    });
  }
  process.on('SIGHUP', () => {
    signalsReceived += 1;
    abort('received SIGHUP');
  });

  // Sent only now that the message listener is attached: the host waits for it before `start`.
  send({ type: 'hello', version: ENGINE_PROTOCOL_VERSION, pid: process.pid });
}

// `import.meta.main` is false when this file is merely imported (never start an engine then);
// runtimes that predate it leave it undefined.
if (import.meta.main !== false) {
  // Before the benchmark's modules are loaded (loadRunBenchmark) and its worker threads start: the
  // desktop app starts this file as a utility process, never through bin/kvbench.js, which turns
  // the cache on for the CLI's engines (where this finds it on already).
  enableCompileCache();
  const channel = nodeIpcChannel() ?? electronParentPortChannel();
  if (channel === undefined) {
    process.stderr.write('engine-process: start me through the engine host (no IPC channel)\n');
    process.exit(2);
  }
  main(channel);
  startOrphanWatchdog({ intervalMs: ORPHAN_CHECK_INTERVAL_MS, graceMs: ORPHAN_KILL_AFTER_MS });
}
