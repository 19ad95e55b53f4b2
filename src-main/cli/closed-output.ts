// A reader that stops early (`kvbench report | head`, a pager quit) closes the pipe. Node ignores
// SIGPIPE, so the next write fails with EPIPE instead, and an EPIPE no one listens for is an
// uncaught exception: a stack trace and exit 1. Unix tools end quietly there; so does every kvbench
// command, from this one place (bin/kvbench.js) rather than around each write.
// Output that cannot be written at all (`kvbench report --json > report.json` on a full disk, a
// redirect to /dev/full, an I/O error) is no reason for a stack trace either: one line says so.
import fs from 'node:fs';
import { writeFailureWords } from '../util/write-failure-words.ts';

/** The status a shell reports for a tool a closed pipe ended (128 + SIGPIPE's 13), as `git log | head` gives. */
export const EXIT_CLOSED_PIPE = 141;
/** The status of a command whose output could not be written: a failure, as README's exit codes say. */
export const EXIT_OUTPUT_FAILED = 1;
/** The status a command stopped as on SIGTERM ends with (128 + 15). */
const EXIT_SIGTERM = 143;

const CLOSED_CODES = new Set(['EPIPE', 'ERR_STREAM_DESTROYED']);

/**
 * How the output went: its reader closed the pipe, the terminal hung up (a dropped SSH session), or
 * a write failed (a full disk, an I/O error of a file or pipe, a descriptor not open for writing).
 */
export type OutputGone = 'closed' | 'hung-up' | 'failed';

/**
 * Calls `onGone` once when `stream`'s output has gone, with the error of the write that found it;
 * later write errors of the gone stream (ERR_STREAM_DESTROYED) are dropped. A terminal that hung up
 * fails writes with EIO; an EIO of a file or pipe is a failed write.
 */
export function onOutputGone(stream: NodeJS.EventEmitter & { isTTY?: boolean }, onGone: (how: OutputGone, err: NodeJS.ErrnoException) => void): void {
  let gone = false;
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (gone) return;
    gone = true;
    const how: OutputGone = err.code === 'EIO' && stream.isTTY === true ? 'hung-up' : CLOSED_CODES.has(err.code ?? '') ? 'closed' : 'failed';
    onGone(how, err);
  });
}

/**
 * What descriptor `fd` is written into: its file's path (from /proc on Linux; a shell's redirect
 * names none otherwise) and whether that is a regular file.
 */
function describeDescriptor(fd: number): { path: string | null; regularFile: boolean } {
  let where: string | null = null;
  try {
    const link = fs.readlinkSync(`/proc/self/fd/${fd}`);
    if (link.startsWith('/')) where = link;
  } catch {
    // not Linux, or /proc not mounted
  }
  let regularFile = false;
  try {
    regularFile = fs.fstatSync(fd).isFile();
  } catch {
    // closed already
  }
  return { path: where, regularFile };
}

/**
 * The one line said when `stream` (stdout or stderr, descriptor `fd`) cannot be written:
 * `kvbench: cannot write the output to /mnt/r/report.json (stdout): the disk is full (ENOSPC)`.
 */
export function outputFailedText(stream: 'stdout' | 'stderr', fd: number, err: NodeJS.ErrnoException): string {
  const { path: where, regularFile } = describeDescriptor(fd);
  const code = err.code ?? '';
  const why = code === 'ENOSPC' && regularFile ? 'the disk is full' : (writeFailureWords(code) ?? err.message);
  return `kvbench: cannot write the output${where !== null ? ` to ${where}` : ''} (${stream}): ${why}${code && !why.includes(code) ? ` (${code})` : ''}\n`;
}

/**
 * What kvbench does when its output goes: a command that winds down on SIGTERM (a suite or run stops
 * its trial and keeps what it has, serve closes) is told to, as if terminated; any other goes on to
 * its end with its output dropped, so the files it writes after printing (a run's results and XLSX,
 * an endpoint run's --output) are still written.
 * - A closed pipe ends quietly: 141 instead of a success, as a shell reports a tool a closed pipe ended.
 * - A terminal that hung up is told as SIGHUP, the signal the hang-up itself sends: one the command
 *   has been sent already, or soon will be, and a repeat of which never abandons its graceful stop.
 * - A failed write (full disk, I/O error) is said in one line on stderr (when stdout failed; a
 *   failed stderr can say nothing), and the command ends 1 where it would have ended 0, or 143 from
 *   the stop this asked for: the output it was to give is incomplete.
 */
export function endWhenOutputGoes(proc: NodeJS.Process = process): void {
  let ended: OutputGone | null = null;
  let stopAsked = false;
  const end = (stream: 'stdout' | 'stderr', fd: number) => (how: OutputGone, err: NodeJS.ErrnoException): void => {
    if (ended !== null) return; // stdout and stderr often go together (2>&1 | head): one ending
    ended = how;
    if (how === 'failed' && stream === 'stdout') proc.stderr.write(outputFailedText(stream, fd, err));
    const signal = how === 'hung-up' ? 'SIGHUP' : 'SIGTERM';
    if (proc.listenerCount(signal) > 0) {
      stopAsked = true;
      proc.emit(signal, signal);
    }
  };
  onOutputGone(proc.stdout, end('stdout', 1));
  onOutputGone(proc.stderr, end('stderr', 2));
  // At the exit, not when the command returns: the failed write's error arrives after the write.
  proc.on('exit', (code) => {
    if (ended === 'failed' && (code === 0 || (stopAsked && code === EXIT_SIGTERM))) proc.exitCode = EXIT_OUTPUT_FAILED;
    else if (ended !== null && ended !== 'failed' && code === 0) proc.exitCode = EXIT_CLOSED_PIPE;
  });
}

/**
 * Writes `chunks` to `out` (stdout) as they are made, waiting whenever the stream asks to (a slow
 * pipe), so that a long listing is never held whole; it stops taking them once the output has gone
 * (a closed pipe, /dev/full: endWhenOutputGoes says so, once).
 */
export async function writeChunksToStdout(chunks: Iterable<string>, out: NodeJS.WritableStream & { destroyed: boolean } = process.stdout): Promise<void> {
  for (const chunk of chunks) {
    if (out.destroyed) return;
    if (out.write(chunk)) continue;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        out.off('drain', done);
        out.off('close', done);
        out.off('error', done);
        resolve();
      };
      out.on('drain', done);
      out.on('close', done);
      out.on('error', done);
    });
  }
}
