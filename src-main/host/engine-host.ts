// Starts one engine process (one trial) and turns its messages into callbacks and a result.
// The process is reached through an EngineTransport: a Node child here (CLI, tests), an Electron
// utility process in the app. Everything it sends is validated; anything malformed kills it.
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import {
  ENGINE_PROTOCOL_VERSION,
  EngineToHostMessageSchema,
  PROGRESS_INTERVAL_MS,
  type EngineErrorCode,
  type HostToEngineMessage,
  type LogLevel,
  type ProgressEvent,
  type RunOutcome,
} from '../../src-shared/engine-protocol.ts';
import { createThrottle } from './throttle.ts';

export const DEFAULT_UV_THREADPOOL_SIZE = 4; // libuv's own default
const MAX_UV_THREADPOOL_SIZE = 1024; // libuv's ceiling
const DEFAULT_CANCEL_GRACE_MS = 30_000;
const DEFAULT_HEARTBEAT_TIMEOUT_MS = 10_000;
/**
 * After its result the engine exits by itself; one that lingers is killed after this. The result
 * is handed over only once the process has gone, so the next trial never starts beside it.
 */
const EXIT_AFTER_RESULT_GRACE_MS = 5_000;
const OUTPUT_TAIL_BYTES = 64 * 1024;
/**
 * A killed engine settles on its exit, not on the kill; past this the host settles anyway (a
 * process in uninterruptible I/O on a hung device can outlive its SIGKILL for a long time).
 */
const KILL_EXIT_WAIT_MS = 10_000;

export interface EngineExit {
  code: number | null;
  signal: string | null;
  /** The last 64 KiB the process wrote to stderr (and stdout), for crash reports. */
  outputTail: string;
}

/** A started engine process, as the host sees it. */
export interface EngineTransport {
  readonly pid: number | undefined;
  send(message: HostToEngineMessage): void;
  onMessage(listener: (message: unknown) => void): void;
  /** Called once, after every message the process sent has been delivered. */
  onExit(listener: (exit: EngineExit) => void): void;
  /** End the process now (SIGKILL where signals exist). */
  kill(): void;
}

/** Starts the process. `env` is its complete environment, needed at spawn (UV_THREADPOOL_SIZE). */
export type EngineTransportFactory = (spawn: { env: Record<string, string> }) => EngineTransport;

export interface StartEngineOptions {
  /** At most ~10 calls per second; the last progress precedes the result. */
  onProgress?: (progress: ProgressEvent) => void;
  /** Engine logs, and the host's own warnings about the engine. */
  onLog?: (level: LogLevel, message: string) => void;
  /** Added to (and overriding) the host's environment. */
  env?: Record<string, string>;
  /** libuv thread pool size = file I/Os in flight; default 4. */
  uvThreadpoolSize?: number;
  transport?: EngineTransportFactory;
  /** How long a cancelled engine may take to return partial results before it is killed. */
  cancelGraceMs?: number;
  /**
   * Silence after which a warning is logged, and the gap's length once it ends (the engine is not
   * killed: it judges its own measured window, and a stall inside it makes the run partial).
   */
  heartbeatTimeoutMs?: number;
}

export interface EngineHandle {
  /** The engine process's pid, once known (at once for a child process; after spawn for a utility process). */
  readonly pid: number | undefined;
  /** Rejects with an EngineError (ENGINE_CRASHED, CANCELLED, PROTOCOL, or the engine's own code). */
  readonly result: Promise<RunOutcome>;
  /** Ask the engine to stop and return partial results; killed if it has not after the grace period. */
  cancel(reason?: string): void;
  /** Kill the engine now; `result` rejects once its process has exited (a result it already sent stands). */
  kill(): void;
}

export class EngineError extends Error {
  readonly code: EngineErrorCode;
  constructor(code: EngineErrorCode, message: string) {
    super(message);
    this.name = 'EngineError';
    this.code = code;
  }
}

const ENGINE_ENTRY_PATH = fileURLToPath(new URL('../engine/engine-process.ts', import.meta.url));

/** The engine as a Node child process running engine-process.ts with this Node (24, type stripping). */
export const forkEngineTransport: EngineTransportFactory = ({ env }) => {
  const child = fork(ENGINE_ENTRY_PATH, [], {
    execPath: process.execPath,
    execArgv: [], // not the host's flags (test runner loaders, inspector ports)
    serialization: 'advanced',
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    env,
  });
  let tail = Buffer.alloc(0);
  const keepTail = (chunk: Buffer): void => {
    tail = Buffer.concat([tail, chunk]).subarray(-OUTPUT_TAIL_BYTES);
  };
  child.stdout?.on('data', keepTail);
  child.stderr?.on('data', keepTail);
  let childError: Error | undefined;
  child.on('error', (err) => (childError ??= err)); // spawn or send failure; 'close' follows
  return {
    pid: child.pid,
    send: (message) => {
      if (child.connected) child.send(message);
    },
    onMessage: (listener) => child.on('message', listener),
    // 'close', not 'exit': it comes after the IPC channel and stdio have drained.
    onExit: (listener) =>
      child.once('close', (code, signal) => {
        const errorLine = childError ? `${childError.message}\n` : '';
        listener({ code, signal, outputTail: errorLine + tail.toString('utf8') });
      }),
    kill: () => child.kill('SIGKILL'),
  };
};

function childEnv(extra: Record<string, string> | undefined, uvThreadpoolSize: number): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries({ ...process.env, ...extra })) {
    if (value !== undefined) env[name] = value;
  }
  // libuv reads it once, when its pool first starts: it has to be there at spawn.
  env.UV_THREADPOOL_SIZE = String(uvThreadpoolSize);
  return env;
}

function describeExit(exit: EngineExit): string {
  const how = exit.signal !== null ? `was killed by signal ${exit.signal}` : `exited with code ${exit.code}`;
  const output = exit.outputTail.trim() === '' ? '' : `\n--- last engine output ---\n${exit.outputTail}`;
  return `engine process ${how} before sending a result${output}`;
}

/** Engines not yet exited, killed when this process exits before they do. */
const liveEngines = new Set<EngineTransport>();
let exitHookInstalled = false;

function trackUntilExit(transport: EngineTransport): void {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    // process.exit() (a second Ctrl-C, a fatal error) skips every cleanup that awaits: an engine
    // left behind would go on loading the target under the next benchmark.
    process.on('exit', () => {
      for (const t of liveEngines) t.kill();
    });
  }
  liveEngines.add(transport);
}

export function startEngine(options: unknown, opts: StartEngineOptions = {}): EngineHandle {
  const uvThreadpoolSize = opts.uvThreadpoolSize ?? DEFAULT_UV_THREADPOOL_SIZE;
  if (!Number.isInteger(uvThreadpoolSize) || uvThreadpoolSize < 1 || uvThreadpoolSize > MAX_UV_THREADPOOL_SIZE) {
    throw new EngineError('VALIDATION', `uvThreadpoolSize must be an integer from 1 to ${MAX_UV_THREADPOOL_SIZE}, got ${uvThreadpoolSize}`);
  }
  const cancelGraceMs = opts.cancelGraceMs ?? DEFAULT_CANCEL_GRACE_MS;
  const heartbeatTimeoutMs = opts.heartbeatTimeoutMs ?? DEFAULT_HEARTBEAT_TIMEOUT_MS;
  const onLog = opts.onLog ?? (() => {});
  const progress = createThrottle<ProgressEvent>((p) => opts.onProgress?.(p), PROGRESS_INTERVAL_MS);

  const transport = (opts.transport ?? forkEngineTransport)({ env: childEnv(opts.env, uvThreadpoolSize) });
  trackUntilExit(transport);

  let resolveResult!: (outcome: RunOutcome) => void;
  let rejectResult!: (error: EngineError) => void;
  const result = new Promise<RunOutcome>((resolve, reject) => {
    resolveResult = resolve;
    rejectResult = reject;
  });

  let settled = false;
  let killedWith: EngineError | undefined; // killed by the host, settling once the process has gone
  let killWaitTimer: ReturnType<typeof setTimeout> | undefined;
  let started = false; // hello received, start sent
  let cancelRequested = false;
  let cancelTimer: ReturnType<typeof setTimeout> | undefined;
  let lingerTimer: ReturnType<typeof setTimeout> | undefined;
  let finalOutcome: RunOutcome | EngineError | undefined; // sent, held until the process exits
  let lastMessageMs = performance.now();
  let silenceWarned = false;

  const watchdog = setInterval(() => {
    const silentMs = performance.now() - lastMessageMs;
    if (silenceWarned || silentMs < heartbeatTimeoutMs) return;
    silenceWarned = true;
    onLog('warn', `no heartbeat from engine process ${transport.pid} for ${Math.round(silentMs / 1000)} s (event loop blocked?)`);
  }, Math.min(1_000, heartbeatTimeoutMs));

  const settle = (outcome: RunOutcome | EngineError): void => {
    if (settled) return;
    settled = true;
    clearInterval(watchdog);
    clearTimeout(cancelTimer);
    clearTimeout(killWaitTimer);
    clearTimeout(lingerTimer);
    progress.cancel();
    if (outcome instanceof EngineError) rejectResult(outcome);
    else resolveResult(outcome);
  };

  const killWith = (error: EngineError): void => {
    if (settled || killedWith) return;
    if (finalOutcome !== undefined) return void transport.kill(); // the result stands; it settles on the exit
    killedWith = error;
    clearInterval(watchdog);
    clearTimeout(cancelTimer);
    // What the caller does next (remove the run directory, start the next trial) must not happen
    // under an engine still doing I/O: the result waits for the exit.
    killWaitTimer = setTimeout(() => {
      settle(new EngineError(error.code, `${error.message} (its process ${transport.pid} had not exited ${KILL_EXIT_WAIT_MS / 1000} s after the kill)`));
    }, KILL_EXIT_WAIT_MS);
    transport.kill();
  };

  transport.onMessage((raw) => {
    if (settled || killedWith || finalOutcome !== undefined) return;
    const nowMs = performance.now();
    const silentMs = nowMs - lastMessageMs;
    lastMessageMs = nowMs;
    silenceWarned = false;
    if (silentMs >= heartbeatTimeoutMs) {
      onLog('warn', `engine process ${transport.pid} was silent for ${(silentMs / 1000).toFixed(1)} s (stopped, or its event loop blocked)`);
    }
    const parsed = EngineToHostMessageSchema.safeParse(raw);
    if (!parsed.success) {
      killWith(new EngineError('PROTOCOL', `invalid message from engine: ${z.prettifyError(parsed.error)}`));
      return;
    }
    const message = parsed.data;
    switch (message.type) {
      case 'hello':
        if (message.version !== ENGINE_PROTOCOL_VERSION) {
          killWith(new EngineError('PROTOCOL', `engine speaks protocol ${message.version}, host speaks ${ENGINE_PROTOCOL_VERSION}`));
        } else if (!started) {
          started = true;
          transport.send({ type: 'start', version: ENGINE_PROTOCOL_VERSION, options });
        }
        return;
      case 'progress':
        progress.push(message.progress);
        return;
      case 'log':
        onLog(message.level, message.message);
        return;
      case 'heartbeat':
        return;
      case 'result':
      case 'error':
        progress.flush(); // the last progress reaches the caller before the result
        finalOutcome = message.type === 'result' ? message.outcome : new EngineError(message.error.code, message.error.message);
        clearInterval(watchdog);
        clearTimeout(cancelTimer);
        lingerTimer = setTimeout(() => {
          onLog('warn', `engine process ${transport.pid} had not exited ${EXIT_AFTER_RESULT_GRACE_MS / 1000} s after its result; killed`);
          transport.kill();
          killWaitTimer = setTimeout(() => {
            onLog('warn', `engine process ${transport.pid} had not exited ${KILL_EXIT_WAIT_MS / 1000} s after the kill; going on without it`);
            settle(finalOutcome!);
          }, KILL_EXIT_WAIT_MS);
        }, EXIT_AFTER_RESULT_GRACE_MS);
        return;
    }
  });

  transport.onExit((exit) => {
    liveEngines.delete(transport);
    // After a cancel, an exit without a result is still the cancel the caller asked for.
    settle(finalOutcome ?? killedWith ?? new EngineError(cancelRequested ? 'CANCELLED' : 'ENGINE_CRASHED', describeExit(exit)));
  });

  return {
    // Read when asked: an Electron utility process knows its pid only once it has spawned.
    get pid() {
      return transport.pid;
    },
    result,
    cancel(reason = 'cancelled by the host') {
      if (settled || cancelRequested || finalOutcome !== undefined) return;
      cancelRequested = true;
      if (!started) {
        killWith(new EngineError('CANCELLED', `cancelled before the engine started: ${reason}`));
        return;
      }
      transport.send({ type: 'cancel', reason });
      cancelTimer = setTimeout(() => {
        killWith(new EngineError('CANCELLED', `engine did not stop within ${cancelGraceMs} ms of cancel (${reason}); killed`));
      }, cancelGraceMs);
    },
    kill() {
      killWith(new EngineError('CANCELLED', 'engine killed by the host'));
    },
  };
}
