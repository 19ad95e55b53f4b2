import { EventEmitter } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import { endQuietlyWhenOutputCloses, EXIT_CLOSED_PIPE, onReaderGone } from '../../../src-main/cli/closed-output.ts';

const epipe = (): NodeJS.ErrnoException => Object.assign(new Error('write EPIPE'), { code: 'EPIPE' });

/** A process with stdout, stderr, exit and signal listeners, enough for endQuietlyWhenOutputCloses. */
function fakeProcess() {
  const proc = Object.assign(new EventEmitter(), { stdout: new EventEmitter(), stderr: new EventEmitter(), exit: vi.fn() });
  return proc;
}

describe('a reader that goes away (kvbench report | head)', () => {
  it('ends quietly once: EPIPE and the writes after it are no uncaught error', () => {
    const stream = new EventEmitter();
    const closed = vi.fn();
    onReaderGone(stream, closed);
    stream.emit('error', epipe());
    stream.emit('error', Object.assign(new Error('write after end'), { code: 'ERR_STREAM_DESTROYED' }));
    expect(closed).toHaveBeenCalledTimes(1);
    // Any other failure is still an error.
    expect(() => stream.emit('error', Object.assign(new Error('disk full'), { code: 'ENOSPC' }))).toThrow(/disk full/);
  });

  it('a command with nothing to wind down goes on to its end (files still written) and ends 141 instead of 0; one that winds down on SIGTERM (suite, run, serve) is told to stop', () => {
    const exitAs = (code: number, closed: boolean): number | undefined => {
      const proc = fakeProcess() as ReturnType<typeof fakeProcess> & { exitCode?: number };
      endQuietlyWhenOutputCloses(proc as unknown as NodeJS.Process);
      if (closed) proc.stdout.emit('error', epipe());
      expect(proc.exit).not.toHaveBeenCalled();
      proc.exitCode = code;
      proc.emit('exit', code);
      return proc.exitCode;
    };
    expect([exitAs(0, false), exitAs(0, true), exitAs(1, true), exitAs(3, true)]).toEqual([0, EXIT_CLOSED_PIPE, 1, 3]);
    expect(EXIT_CLOSED_PIPE).toBe(141);

    const suite = fakeProcess();
    const onSigterm = vi.fn();
    suite.on('SIGTERM', onSigterm);
    endQuietlyWhenOutputCloses(suite as unknown as NodeJS.Process);
    suite.stdout.emit('error', epipe());
    suite.stdout.emit('error', epipe()); // the events it writes while stopping
    suite.stderr.emit('error', epipe()); // 2>&1 | head: both went with the reader
    expect(onSigterm).toHaveBeenCalledTimes(1);
    expect(suite.exit).not.toHaveBeenCalled();
  });

  it('a terminal that hung up (EIO on a TTY: the SSH session dropped) is told as SIGHUP, once; EIO of a file or pipe is still an error', () => {
    const eio = (): NodeJS.ErrnoException => Object.assign(new Error('write EIO'), { code: 'EIO' });
    const serve = fakeProcess();
    Object.assign(serve.stderr, { isTTY: true });
    const onSighup = vi.fn();
    const onSigterm = vi.fn();
    serve.on('SIGHUP', onSighup);
    serve.on('SIGTERM', onSigterm);
    endQuietlyWhenOutputCloses(serve as unknown as NodeJS.Process);
    serve.stderr.emit('error', eio());
    serve.stderr.emit('error', eio()); // its log lines while stopping
    expect(onSighup).toHaveBeenCalledTimes(1);
    expect(onSighup).toHaveBeenCalledWith('SIGHUP');
    expect(onSigterm).not.toHaveBeenCalled();

    const toFile = fakeProcess();
    endQuietlyWhenOutputCloses(toFile as unknown as NodeJS.Process);
    expect(() => toFile.stdout.emit('error', eio())).toThrow(/EIO/);
  });
});
