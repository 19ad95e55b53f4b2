import { EventEmitter } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import { endWhenOutputGoes, EXIT_CLOSED_PIPE, onOutputGone, outputFailedText } from '../../../src-main/cli/closed-output.ts';

const epipe = (): NodeJS.ErrnoException => Object.assign(new Error('write EPIPE'), { code: 'EPIPE' });

const enospc = (): NodeJS.ErrnoException => Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });

/** A process with stdout, stderr (which records what is written to it), exit and signal listeners, enough for endWhenOutputGoes. */
function fakeProcess() {
  const written: string[] = [];
  const stderr = Object.assign(new EventEmitter(), { write: (s: string) => written.push(s) > 0 });
  const proc = Object.assign(new EventEmitter(), { stdout: new EventEmitter(), stderr, exit: vi.fn(), written });
  return proc;
}

describe('a reader that goes away (kvbench report | head)', () => {
  it('ends quietly once: EPIPE and the writes after it are no uncaught error', () => {
    const stream = new EventEmitter();
    const gone = vi.fn();
    onOutputGone(stream, gone);
    stream.emit('error', epipe());
    stream.emit('error', Object.assign(new Error('write after end'), { code: 'ERR_STREAM_DESTROYED' }));
    expect(gone).toHaveBeenCalledTimes(1);
    expect(gone.mock.calls[0][0]).toBe('closed');
  });

  it('a command with nothing to wind down goes on to its end (files still written) and ends 141 instead of 0; one that winds down on SIGTERM (suite, run, serve) is told to stop', () => {
    const exitAs = (code: number, closed: boolean): number | undefined => {
      const proc = fakeProcess() as ReturnType<typeof fakeProcess> & { exitCode?: number };
      endWhenOutputGoes(proc as unknown as NodeJS.Process);
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
    endWhenOutputGoes(suite as unknown as NodeJS.Process);
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
    endWhenOutputGoes(serve as unknown as NodeJS.Process);
    serve.stderr.emit('error', eio());
    serve.stderr.emit('error', eio()); // its log lines while stopping
    expect(onSighup).toHaveBeenCalledTimes(1);
    expect(onSighup).toHaveBeenCalledWith('SIGHUP');
    expect(onSigterm).not.toHaveBeenCalled();

    const toFile = fakeProcess();
    endWhenOutputGoes(toFile as unknown as NodeJS.Process);
    toFile.stdout.emit('error', eio());
    expect(toFile.written).toHaveLength(1);
    expect(toFile.written[0]).toMatch(/^kvbench: cannot write the output.*\(stdout\): an I\/O error \(EIO\)\n$/);
  });
});

describe('output that cannot be written (a full disk, /dev/full)', () => {
  it('is no uncaught error: one line on stderr, and the command ends 1 where it would have ended 0', () => {
    const stream = new EventEmitter();
    const gone = vi.fn();
    onOutputGone(stream, gone);
    expect(() => stream.emit('error', enospc())).not.toThrow();
    stream.emit('error', Object.assign(new Error('write after end'), { code: 'ERR_STREAM_DESTROYED' }));
    expect(gone).toHaveBeenCalledTimes(1);
    expect(gone.mock.calls[0][0]).toBe('failed');

    const exitAs = (code: number): { code: number | undefined; said: string[] } => {
      const proc = fakeProcess() as ReturnType<typeof fakeProcess> & { exitCode?: number };
      endWhenOutputGoes(proc as unknown as NodeJS.Process);
      proc.stdout.emit('error', enospc());
      proc.stdout.emit('error', enospc()); // the writes after it: said once
      proc.exitCode = code;
      proc.emit('exit', code);
      return { code: proc.exitCode, said: proc.written };
    };
    const ok = exitAs(0);
    expect(ok.code).toBe(1);
    expect(ok.said).toHaveLength(1);
    expect(ok.said[0]).toMatch(/^kvbench: cannot write the output.*\(stdout\): .*\(ENOSPC\)\n$/);
    expect([exitAs(3).code, exitAs(130).code]).toEqual([3, 130]);
  });

  it('a run or suite still at work stops as on SIGTERM, and that stop ends 1, not 143', () => {
    const run = fakeProcess() as ReturnType<typeof fakeProcess> & { exitCode?: number };
    const onSigterm = vi.fn();
    run.on('SIGTERM', onSigterm);
    endWhenOutputGoes(run as unknown as NodeJS.Process);
    run.stdout.emit('error', enospc());
    run.stderr.emit('error', enospc()); // 2>&1 into the same full disk: one ending
    expect(onSigterm).toHaveBeenCalledTimes(1);
    run.exitCode = 143;
    run.emit('exit', 143);
    expect(run.exitCode).toBe(1);
  });

  it('a failed stderr can say nothing: no line is written to it', () => {
    const proc = fakeProcess();
    endWhenOutputGoes(proc as unknown as NodeJS.Process);
    proc.stderr.emit('error', enospc());
    expect(proc.written).toEqual([]);
  });

  it('names the file and the cause in words', () => {
    expect(outputFailedText('stdout', -1, enospc())).toBe('kvbench: cannot write the output (stdout): no space is left on the device (ENOSPC)\n');
    const odd = Object.assign(new Error('EXDEV: something odd'), { code: 'EXDEV' });
    expect(outputFailedText('stdout', -1, odd)).toBe('kvbench: cannot write the output (stdout): EXDEV: something odd\n');
  });
});
