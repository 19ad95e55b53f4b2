// A reader that stops early (`kvbench report | head`, a pager quit) closes the pipe. Node ignores
// SIGPIPE, so the next write fails with EPIPE instead, and an EPIPE no one listens for is an
// uncaught exception: a stack trace and exit 1. Unix tools end quietly there; so does every kvbench
// command, from this one place (bin/kvbench.js) rather than around each write.

/** The status a shell reports for a tool a closed pipe ended (128 + SIGPIPE's 13), as `git log | head` gives. */
export const EXIT_CLOSED_PIPE = 141;

const CLOSED_CODES = new Set(['EPIPE', 'ERR_STREAM_DESTROYED']);

/** How the reader went: a closed pipe, or a terminal that hung up (a dropped SSH session). */
export type ReaderGone = 'closed' | 'hung-up';

/**
 * Calls `onClosed` once when `stream`'s reader has gone; later write errors of the closed stream are
 * dropped. A terminal that hung up fails writes with EIO. Any other error is thrown, as it would have
 * been without this listener (an EIO of a file or pipe is a real I/O error).
 */
export function onReaderGone(stream: NodeJS.EventEmitter & { isTTY?: boolean }, onClosed: (how: ReaderGone) => void): void {
  let closed = false;
  stream.on('error', (err: NodeJS.ErrnoException) => {
    const hungUp = err.code === 'EIO' && stream.isTTY === true;
    if (!hungUp && !CLOSED_CODES.has(err.code ?? '')) throw err;
    if (closed) return;
    closed = true;
    onClosed(hungUp ? 'hung-up' : 'closed');
  });
}

/**
 * What kvbench does when its output's reader goes: a command that winds down on SIGTERM (a suite or
 * run stops its trial and keeps what it has, serve closes) is told to, as if terminated; any other
 * goes on to its end with its output dropped, so the files it writes after printing (a run's results
 * and XLSX, an endpoint run's --output) are still written. Returns the exit status to end with:
 * 141 instead of a success once the reader has gone, as a shell reports a tool a closed pipe ended.
 * A terminal that hung up is told as SIGHUP, the signal the hang-up itself sends: one the command
 * has been sent already, or soon will be, and a repeat of which never abandons its graceful stop.
 */
export function endQuietlyWhenOutputCloses(proc: NodeJS.Process = process): void {
  let ended = false;
  const end = (how: ReaderGone): void => {
    if (ended) return; // stdout and stderr often go together (2>&1 | head): one ending
    ended = true;
    const signal = how === 'hung-up' ? 'SIGHUP' : 'SIGTERM';
    if (proc.listenerCount(signal) > 0) proc.emit(signal, signal);
  };
  onReaderGone(proc.stdout, end);
  onReaderGone(proc.stderr, end);
  // At the exit, not when the command returns: the failed write's EPIPE arrives after the write.
  proc.on('exit', (code) => {
    if (ended && code === 0) proc.exitCode = EXIT_CLOSED_PIPE;
  });
}
