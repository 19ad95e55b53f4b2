// The engine in an Electron utility process: an EngineTransport for the same host and protocol the
// CLI uses (src-main/host/engine-host.ts). One trial, one named process ("kvbench engine") with its
// own heap; stdout and stderr are piped and their tail kept for crash reports; a kill is a kill.
import type { UtilityProcess } from 'electron';
import type { EngineExit, EngineTransport, EngineTransportFactory } from '../host/engine-host.ts';

const OUTPUT_TAIL_BYTES = 64 * 1024;

/** The part of Electron's utilityProcess this needs (a fake in tests). */
export interface UtilityProcessApi {
  fork(modulePath: string, args?: string[], options?: { env?: Record<string, string>; stdio?: 'pipe'; serviceName?: string; execArgv?: string[] }): UtilityProcess;
}

export function utilityProcessTransport(utilityProcess: UtilityProcessApi, entryFile: string): EngineTransportFactory {
  return ({ env }): EngineTransport => {
    const child = utilityProcess.fork(entryFile, [], { env, stdio: 'pipe', serviceName: 'kvbench engine' });
    let tail = Buffer.alloc(0);
    const keepTail = (chunk: Buffer | string): void => {
      tail = Buffer.concat([tail, Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk)]).subarray(-OUTPUT_TAIL_BYTES);
    };
    child.stdout?.on('data', keepTail);
    child.stderr?.on('data', keepTail);
    let fatal = '';
    child.on('error', (type, location, report) => {
      fatal = `${type} at ${location}\n${report.slice(0, 4000)}\n`;
    });
    // Electron clears child.pid before it emits 'exit': the host asks for the pid of a crashed engine
    // (to remove the run directory it left) only after that, so it is kept from 'spawn' on.
    let pid: number | undefined;
    child.once('spawn', () => (pid = child.pid));
    let exited = false;
    return {
      // Known once the process has spawned; the host reads it when it needs it.
      get pid() {
        return pid ?? child.pid;
      },
      send: (message) => {
        if (!exited) child.postMessage(message);
      },
      onMessage: (listener) => {
        child.on('message', (message: unknown) => listener(message));
      },
      onExit: (listener) => {
        child.once('exit', (code) => {
          exited = true;
          const exit: EngineExit = { code, signal: null, outputTail: fatal + tail.toString('utf8') };
          // Let messages already queued be delivered first, as Node's 'close' guarantees for children.
          setImmediate(() => listener(exit));
        });
      },
      kill: () => {
        if (!exited) child.kill();
      },
    };
  };
}
