// The host's protocol logic against an in-memory transport and fake timers.
import { afterEach, beforeEach, describe, expect, expectTypeOf, it, vi } from 'vitest';
import type { RunBenchmark } from '../../../src-main/engine/engine-process.ts';
import type { runBenchmark as realRunBenchmark } from '../../../src-main/engine/benchmark.ts';
import {
  EngineError,
  startEngine,
  type EngineExit,
  type EngineTransport,
  type StartEngineOptions,
} from '../../../src-main/host/engine-host.ts';
import { ENGINE_PROTOCOL_VERSION, type HostToEngineMessage, type ProgressEvent, type RunOutcome } from '../../../src-shared/engine-protocol.ts';

class FakeTransport implements EngineTransport {
  readonly pid = 4242;
  readonly sent: HostToEngineMessage[] = [];
  killed = 0;
  env: Record<string, string> = {};
  private messageListener: (message: unknown) => void = () => {};
  private exitListener: (exit: EngineExit) => void = () => {};

  send(message: HostToEngineMessage): void {
    this.sent.push(message);
  }
  onMessage(listener: (message: unknown) => void): void {
    this.messageListener = listener;
  }
  onExit(listener: (exit: EngineExit) => void): void {
    this.exitListener = listener;
  }
  /** A killed process exits (and says so) unless a test holds it in the kernel. */
  exitsWhenKilled = true;
  kill(): void {
    this.killed += 1;
    if (this.exitsWhenKilled) this.exit({ code: null, signal: 'SIGKILL', outputTail: '' });
  }
  emit(message: unknown): void {
    this.messageListener(message);
  }
  exit(exit: EngineExit): void {
    this.exitListener(exit);
  }
}

const progress = (requestsCompleted: number): ProgressEvent => ({
  phase: 'running',
  elapsedNs: 0,
  durationNs: null,
  requestsCompleted,
  maxRequests: null,
  activeUsers: 1,
  queueDepth: 0,
  generatedTokens: 0,
  storageReadBytes: 0,
  storageWriteBytes: 0,
  generatedTokensPerSec: 0,
  storageReadBytesPerSec: 0,
  storageWriteBytesPerSec: 0,
  cpuReadBytesPerSec: 0,
  cpuWriteBytesPerSec: 0,
  e2eLatencyP95Ns: null,
  storageReadP95Ns: null,
  eventLoopLagP99Ns: null,
});
const outcome: RunOutcome = { status: 'complete', reason: null, results: {}, summaryText: 'ok' };

function start(opts: StartEngineOptions = {}) {
  const transport = new FakeTransport();
  const handle = startEngine({ seed: 1 }, {
    ...opts,
    transport: ({ env }) => {
      transport.env = env;
      return transport;
    },
  });
  handle.result.catch(() => {}); // tests inspect it when they need to
  return { transport, handle };
}

async function rejection(promise: Promise<unknown>): Promise<EngineError> {
  const err = await promise.then(() => expect.fail('expected a rejection'), (e: unknown) => e);
  expect(err).toBeInstanceOf(EngineError);
  return err as EngineError;
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'performance'] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('startEngine (protocol logic)', () => {
  it('the real engine fits what engine-process.ts calls (checked by tsc)', () => {
    expectTypeOf<typeof realRunBenchmark>().toExtend<RunBenchmark>();
  });

  it('sends start only after the engine says hello', async () => {
    const { transport, handle } = start();
    expect(transport.sent).toEqual([]);
    transport.emit({ type: 'hello', version: ENGINE_PROTOCOL_VERSION, pid: 4242 });
    expect(transport.sent).toEqual([{ type: 'start', version: ENGINE_PROTOCOL_VERSION, options: { seed: 1 } }]);
    transport.emit({ type: 'result', outcome });
    transport.exit({ code: 0, signal: null, outputTail: '' });
    await expect(handle.result).resolves.toEqual(outcome);
    expect(handle.pid).toBe(4242);
  });

  it('passes UV_THREADPOOL_SIZE and extra variables in the spawn environment', () => {
    expect(start().transport.env.UV_THREADPOOL_SIZE).toBe('4');
    const { transport } = start({ uvThreadpoolSize: 64, env: { KVBENCH_X: 'y' } });
    expect(transport.env.UV_THREADPOOL_SIZE).toBe('64');
    expect(transport.env.KVBENCH_X).toBe('y');
  });

  it('refuses an impossible thread pool size with VALIDATION', () => {
    for (const uvThreadpoolSize of [0, 1.5, 2048]) {
      expect(() => start({ uvThreadpoolSize })).toThrow(expect.objectContaining({ code: 'VALIDATION' }));
    }
  });

  it('throttles progress and delivers the pending one before the result', async () => {
    const seen: string[] = [];
    const { transport, handle } = start({ onProgress: (p) => seen.push(`progress ${p.requestsCompleted}`) });
    transport.emit({ type: 'hello', version: ENGINE_PROTOCOL_VERSION, pid: 4242 });
    for (let i = 1; i <= 50; i += 1) {
      transport.emit({ type: 'progress', progress: progress(i) });
      vi.advanceTimersByTime(5);
    }
    transport.emit({ type: 'result', outcome });
    transport.exit({ code: 0, signal: null, outputTail: '' });
    await handle.result.then(() => seen.push('result'));
    // Event i arrives at (i - 1) * 5 ms: the leading one, the latest at 100 ms and at 200 ms,
    // then the last one, flushed before the result.
    expect(seen).toEqual(['progress 1', 'progress 20', 'progress 40', 'progress 50', 'result']);
  });

  it('forwards engine logs and warns (without killing) after 10 s without a heartbeat', () => {
    const logs: string[] = [];
    const { transport } = start({ onLog: (level, message) => logs.push(`${level}: ${message}`) });
    transport.emit({ type: 'hello', version: ENGINE_PROTOCOL_VERSION, pid: 4242 });
    transport.emit({ type: 'log', level: 'info', message: 'preconditioning' });
    for (let s = 0; s < 5; s += 1) {
      vi.advanceTimersByTime(1_000);
      transport.emit({ type: 'heartbeat', uptimeNs: s * 1e9 });
    }
    expect(logs).toEqual(['info: preconditioning']);
    vi.advanceTimersByTime(11_000);
    expect(logs).toHaveLength(2);
    expect(logs[1]).toMatch(/^warn: no heartbeat from engine process 4242 for 1\d s/);
    vi.advanceTimersByTime(30_000);
    expect(logs).toHaveLength(2); // one warning per silence
    expect(transport.killed).toBe(0);
    // The engine speaks again (SIGCONT): how long it was gone is said once, and a normal gap says nothing.
    transport.emit({ type: 'heartbeat', uptimeNs: 46e9 });
    vi.advanceTimersByTime(1_000);
    transport.emit({ type: 'heartbeat', uptimeNs: 47e9 });
    expect(logs.slice(2)).toEqual(['warn: engine process 4242 was silent for 41.0 s (stopped, or its event loop blocked)']);
  });

  it('kills the engine and rejects with PROTOCOL on an invalid message', async () => {
    const { transport, handle } = start();
    transport.emit({ type: 'progress', progress: { ...progress(1), elapsedNs: 1n } });
    const err = await rejection(handle.result);
    expect(err.code).toBe('PROTOCOL');
    expect(err.message).toContain('elapsedNs');
    expect(transport.killed).toBe(1);
  });

  it('kills an engine of another protocol version', async () => {
    const { transport, handle } = start();
    transport.emit({ type: 'hello', version: ENGINE_PROTOCOL_VERSION + 1, pid: 4242 });
    expect((await rejection(handle.result)).code).toBe('PROTOCOL');
    expect(transport.sent).toEqual([]);
    expect(transport.killed).toBe(1);
  });

  it('turns an error message into an EngineError with its code', async () => {
    const { transport, handle } = start();
    transport.emit({ type: 'error', error: { code: 'DIRECT_IO_UNSUPPORTED', message: 'tmpfs' } });
    transport.exit({ code: 1, signal: null, outputTail: '' });
    const err = await rejection(handle.result);
    expect([err.code, err.message]).toEqual(['DIRECT_IO_UNSUPPORTED', 'tmpfs']);
  });

  it('reports an exit without a result as ENGINE_CRASHED, with the output tail', async () => {
    const { transport, handle } = start();
    transport.emit({ type: 'hello', version: ENGINE_PROTOCOL_VERSION, pid: 4242 });
    transport.exit({ code: null, signal: 'SIGSEGV', outputTail: 'segfault in worker\n' });
    const err = await rejection(handle.result);
    expect(err.code).toBe('ENGINE_CRASHED');
    expect(err.message).toContain('killed by signal SIGSEGV');
    expect(err.message).toContain('segfault in worker');
  });

  it('cancel sends cancel, and kills with CANCELLED when the grace period runs out', async () => {
    const { transport, handle } = start({ cancelGraceMs: 2_000 });
    transport.emit({ type: 'hello', version: ENGINE_PROTOCOL_VERSION, pid: 4242 });
    handle.cancel('stop');
    handle.cancel('stop again'); // once is enough
    expect(transport.sent.slice(1)).toEqual([{ type: 'cancel', reason: 'stop' }]);
    vi.advanceTimersByTime(1_999);
    expect(transport.killed).toBe(0);
    vi.advanceTimersByTime(1);
    expect(transport.killed).toBe(1);
    expect((await rejection(handle.result)).code).toBe('CANCELLED');
  });

  it('a result within the grace period wins over the kill', async () => {
    const { transport, handle } = start({ cancelGraceMs: 2_000 });
    transport.emit({ type: 'hello', version: ENGINE_PROTOCOL_VERSION, pid: 4242 });
    handle.cancel();
    const partial: RunOutcome = { ...outcome, status: 'partial', reason: 'cancelled' };
    transport.emit({ type: 'result', outcome: partial });
    transport.exit({ code: 0, signal: null, outputTail: '' });
    vi.advanceTimersByTime(60_000);
    await expect(handle.result).resolves.toEqual(partial);
    expect(transport.killed).toBe(0);
  });

  it('cancel before hello kills at once', async () => {
    const { transport, handle } = start();
    handle.cancel();
    expect((await rejection(handle.result)).code).toBe('CANCELLED');
    expect(transport.killed).toBe(1);
  });

  it('a killed engine settles when its process has exited, not before', async () => {
    const { transport, handle } = start();
    transport.exitsWhenKilled = false;
    transport.emit({ type: 'hello', version: ENGINE_PROTOCOL_VERSION, pid: 4242 });
    let settled = false;
    handle.result.catch(() => (settled = true));
    handle.kill();
    expect(transport.killed).toBe(1);
    transport.emit({ type: 'result', outcome }); // too late: it was killed
    await vi.advanceTimersByTimeAsync(1_000);
    expect(settled).toBe(false);
    transport.exit({ code: null, signal: 'SIGKILL', outputTail: '' });
    const err = await rejection(handle.result);
    expect([err.code, err.message]).toEqual(['CANCELLED', 'engine killed by the host']);
  });

  it('a killed engine that does not exit settles after a bounded wait, saying so', async () => {
    const { transport, handle } = start({ cancelGraceMs: 2_000 });
    transport.exitsWhenKilled = false;
    transport.emit({ type: 'hello', version: ENGINE_PROTOCOL_VERSION, pid: 4242 });
    handle.cancel('stop');
    let settled = false;
    handle.result.catch(() => (settled = true));
    await vi.advanceTimersByTimeAsync(2_000 + 9_999);
    expect(transport.killed).toBe(1);
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    const err = await rejection(handle.result);
    expect(err.code).toBe('CANCELLED');
    expect(err.message).toMatch(/did not stop within 2000 ms of cancel \(stop\); killed \(its process 4242 had not exited 10 s after the kill\)/);
  });

  it('hands the result over only once the engine process has exited', async () => {
    const { transport, handle } = start();
    transport.emit({ type: 'hello', version: ENGINE_PROTOCOL_VERSION, pid: 4242 });
    let settled = false;
    void handle.result.then(() => (settled = true));
    transport.emit({ type: 'result', outcome });
    handle.cancel('too late'); // the result stands
    await vi.advanceTimersByTimeAsync(1_000);
    expect(settled).toBe(false);
    expect(transport.sent.filter((m) => m.type === 'cancel')).toEqual([]);
    transport.exit({ code: 0, signal: null, outputTail: '' });
    await expect(handle.result).resolves.toEqual(outcome);
    expect(transport.killed).toBe(0);
  });

  it('kills an engine that lingers after its result and still hands over the result', async () => {
    const logs: string[] = [];
    const { transport, handle } = start({ onLog: (level, message) => logs.push(`${level}: ${message}`) });
    transport.emit({ type: 'hello', version: ENGINE_PROTOCOL_VERSION, pid: 4242 });
    let settled = false;
    void handle.result.then(() => (settled = true));
    transport.exitsWhenKilled = false;
    transport.emit({ type: 'result', outcome });
    await vi.advanceTimersByTimeAsync(4_999);
    expect([transport.killed, settled]).toEqual([0, false]);
    await vi.advanceTimersByTimeAsync(1);
    expect([transport.killed, settled]).toEqual([1, false]);
    transport.exit({ code: null, signal: 'SIGKILL', outputTail: '' });
    await expect(handle.result).resolves.toEqual(outcome);
    expect(logs).toEqual(['warn: engine process 4242 had not exited 5 s after its result; killed']);
  });

  it('a lingering engine that outlives its kill settles with its result after a bounded wait', async () => {
    const logs: string[] = [];
    const { transport, handle } = start({ onLog: (level, message) => logs.push(`${level}: ${message}`) });
    transport.exitsWhenKilled = false;
    transport.emit({ type: 'hello', version: ENGINE_PROTOCOL_VERSION, pid: 4242 });
    transport.emit({ type: 'error', error: { code: 'INSUFFICIENT_SPACE', message: 'disk full' } });
    let settled = false;
    handle.result.catch(() => (settled = true));
    await vi.advanceTimersByTimeAsync(5_000 + 9_999);
    expect([transport.killed, settled]).toEqual([1, false]);
    await vi.advanceTimersByTimeAsync(1);
    const err = await rejection(handle.result);
    expect([err.code, err.message]).toEqual(['INSUFFICIENT_SPACE', 'disk full']);
    expect(logs[1]).toBe('warn: engine process 4242 had not exited 10 s after the kill; going on without it');
  });
});
