// engine-process.ts driven directly over IPC, for what the host never does on purpose.
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { ENGINE_PROTOCOL_VERSION, EngineToHostMessageSchema, type EngineToHostMessage } from '../../../src-shared/engine-protocol.ts';

const ENGINE_PROCESS_PATH = fileURLToPath(new URL('../../../src-main/engine/engine-process.ts', import.meta.url));
const FAKE_ENGINE_PATH = fileURLToPath(new URL('../../fixtures/fake-engine.ts', import.meta.url));

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

function forkEngine(): { child: ChildProcess; next: (type: EngineToHostMessage['type']) => Promise<EngineToHostMessage> } {
  const child = fork(ENGINE_PROCESS_PATH, [], {
    execPath: process.execPath,
    execArgv: [],
    serialization: 'advanced',
    stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
    env: { ...process.env, KVBENCH_ENGINE_MODULE: FAKE_ENGINE_PATH },
  });
  children.push(child);
  const next = (type: EngineToHostMessage['type']): Promise<EngineToHostMessage> =>
    new Promise((resolve) => {
      const listener = (raw: unknown): void => {
        const message = EngineToHostMessageSchema.parse(raw);
        if (message.type !== type) return;
        child.off('message', listener);
        resolve(message);
      };
      child.on('message', listener);
    });
  return { child, next };
}

describe('engine-process', () => {
  it('says hello with its protocol version and pid', async () => {
    const { child, next } = forkEngine();
    expect(await next('hello')).toEqual({ type: 'hello', version: ENGINE_PROTOCOL_VERSION, pid: child.pid });
  });

  it('refuses a start with another protocol version', async () => {
    const { child, next } = forkEngine();
    await next('hello');
    const exited = once(child, 'exit');
    child.send({ type: 'start', version: ENGINE_PROTOCOL_VERSION + 1, options: { behaviour: 'complete' } });
    const message = await next('error');
    expect(message.type === 'error' && message.error.code).toBe('PROTOCOL');
    expect((await exited)[0]).toBe(1);
  });

  it('sends heartbeats while running', async () => {
    const { child, next } = forkEngine();
    await next('hello');
    child.send({ type: 'start', version: ENGINE_PROTOCOL_VERSION, options: { behaviour: 'hang-until-cancel' } });
    const message = await next('heartbeat');
    expect(message.type === 'heartbeat' && message.uptimeNs).toBeGreaterThan(0);
  });

  it('aborts and exits when the host disconnects', async () => {
    const { child, next } = forkEngine();
    await next('hello');
    child.send({ type: 'start', version: ENGINE_PROTOCOL_VERSION, options: { behaviour: 'hang-until-cancel' } });
    await next('progress');
    const exited = once(child, 'exit');
    child.disconnect();
    expect((await exited)[0]).toBe(0); // the fake returned its partial outcome, then the engine exited
  });
});
