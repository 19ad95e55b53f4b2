// A reader that stops early (`kvbench report | head`, a pager quit) closes the pipe. Node ignores
// SIGPIPE, so the next write fails with EPIPE instead, and an EPIPE no one listens for is an
// uncaught exception: a stack trace and exit 1. Unix tools end quietly there; so does every kvbench
// command, from this one place (bin/kvbench.js) rather than around each write.

/** The status a shell reports for a tool a closed pipe ended (128 + SIGPIPE's 13), as `git log | head` gives. */
export const EXIT_CLOSED_PIPE = 141;

const CLOSED_CODES = new Set(['EPIPE', 'ERR_STREAM_DESTROYED']);

/**
 * Calls `onClosed` once when `stream`'s reader has gone; later write errors of the closed stream are
 * dropped. Any other error is thrown, as it would have been without this listener.
 */
export function onReaderGone(stream: NodeJS.EventEmitter, onClosed: () => void): void {
  let closed = false;
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (!CLOSED_CODES.has(err.code ?? '')) throw err;
    if (closed) return;
    closed = true;
    onClosed();
  });
}

/**
 * What kvbench does when its output's reader goes: a command that winds down on SIGTERM (a suite or
 * run stops its trial and keeps what it has, serve closes) is told to, as if terminated; any other
 * (history, report …) has nothing left to do for anyone and exits at once, quietly, with 141.
 */
export function endQuietlyWhenOutputCloses(proc: NodeJS.Process = process): void {
  let ended = false;
  const end = (): void => {
    if (ended) return; // stdout and stderr often go together (2>&1 | head): one ending
    ended = true;
    if (proc.listenerCount('SIGTERM') > 0) proc.emit('SIGTERM', 'SIGTERM');
    else proc.exit(EXIT_CLOSED_PIPE);
  };
  onReaderGone(proc.stdout, end);
  onReaderGone(proc.stderr, end);
}
