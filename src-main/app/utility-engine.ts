// The engine in an Electron utility process: an EngineTransport for the same host and protocol the
// CLI uses (src-main/host/engine-host.ts). One trial, one named process ("kvbench engine") with its
// own heap; stdout and stderr are piped and their tail kept for crash reports, and stderr's lines go
// to the app's log (Node's own warnings are written there, never through the protocol; an app has
// no terminal to show them); a kill is a kill (SIGKILL by pid: Electron's own kill() is a SIGTERM,
// which the engine takes as a graceful abort).
import readline from 'node:readline';
import type { UtilityProcess } from 'electron';
import type { EngineExit, EngineTransport, EngineTransportFactory } from '../host/engine-host.ts';

const OUTPUT_TAIL_BYTES = 64 * 1024;
/** Lines of one engine's stderr written to the app's log: a runaway engine must not flood it (the tail is kept anyway). */
const LOGGED_STDERR_LINES = 200;
const LOGGED_LINE_CHARS = 2000;

/** The part of Electron's utilityProcess this needs (a fake in tests). */
export interface UtilityProcessApi {
  fork(modulePath: string, args?: string[], options?: { env?: Record<string, string>; stdio?: 'pipe'; serviceName?: string; execArgv?: string[] }): UtilityProcess;
}

export function utilityProcessTransport(utilityProcess: UtilityProcessApi, entryFile: string, log: (message: string) => void = () => {}): EngineTransportFactory {
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
    let exited = false;
    let killRequested = false;
    const killNow = (): void => {
      if (exited || pid === undefined) return;
      try {
        // Chromium notices the death like a crash, reaps the process and emits 'exit'.
        process.kill(pid, 'SIGKILL');
      } catch {
        child.kill(); // not ours to signal (should not happen): Electron's SIGTERM, then its SIGKILL 2 s later
      }
    };
    child.once('spawn', () => {
      pid = child.pid;
      // A kill asked for before the process existed (a cancel at once) is done as soon as it does.
      if (killRequested) killNow();
    });
    // Reaped by then: its pid may be another process's now.
    child.once('exit', () => (exited = true));
    if (child.stderr) {
      let lines = 0;
      readline.createInterface({ input: child.stderr, crlfDelay: Infinity }).on('line', (line) => {
        lines += 1;
        const who = `engine process ${pid ?? child.pid ?? '?'}`;
        if (lines <= LOGGED_STDERR_LINES) log(`${who}: ${line.slice(0, LOGGED_LINE_CHARS)}`);
        else if (lines === LOGGED_STDERR_LINES + 1) log(`${who}: more on stderr, not logged (its last 64 KiB go with a crash report)`);
      });
    }
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
          const exit: EngineExit = { code, signal: null, outputTail: fatal + tail.toString('utf8') };
          // Let messages already queued be delivered first, as Node's 'close' guarantees for children.
          setImmediate(() => listener(exit));
        });
      },
      kill: () => {
        killRequested = true;
        killNow();
      },
    };
  };
}
