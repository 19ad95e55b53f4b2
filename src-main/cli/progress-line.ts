import { averageStorageBytesPerSec, averageTokensPerSec, RATE_INTERVAL_MS, type ProgressEvent } from '../../src-shared/engine-protocol.ts';

const BAR_WIDTH = 24;
/** Without a terminal (CI logs, pipes) a plain line at most this often. */
const PLAIN_INTERVAL_NS = 10e9;

function gbPerSec(bytesPerSec: number): string {
  return `${(bytesPerSec / 1e9).toFixed(2)} GB/s`;
}

/**
 * Tokens/s as the results define it (generated tokens ÷ the window so far), then the last interval's
 * rate, which the storage rates beside it are too.
 */
export function tokensPerSecText(p: ProgressEvent): string {
  const avg = averageTokensPerSec(p);
  return `tok/s ${avg === null ? '-' : avg.toFixed(0)} (last ${RATE_INTERVAL_MS / 1000} s ${p.generatedTokensPerSec.toFixed(0)})`;
}

/**
 * Storage read and write as the results define their bandwidths (the storage tier's bytes ÷ the window
 * so far), then the last interval's rates; `rate` formats bytes/s.
 */
export function storageText(p: ProgressEvent, rate: (bytesPerSec: number) => string = gbPerSec): string {
  const avg = averageStorageBytesPerSec(p);
  const last = `last ${RATE_INTERVAL_MS / 1000} s R ${rate(p.storageReadBytesPerSec)} W ${rate(p.storageWriteBytesPerSec)}`;
  return `storage R ${avg === null ? '-' : rate(avg.readBytesPerSec)} W ${avg === null ? '-' : rate(avg.writeBytesPerSec)} (${last})`;
}

/** A one-line progress bar on a terminal; periodic plain lines otherwise. */
export class ProgressLine {
  readonly #out: NodeJS.WriteStream;
  readonly #tty: boolean;
  #lastPlainNs = 0n;
  #shown = false;

  constructor(out: NodeJS.WriteStream) {
    this.#out = out;
    this.#tty = Boolean(out.isTTY);
  }

  update(p: ProgressEvent): void {
    const fraction =
      p.maxRequests !== null && p.maxRequests > 0
        ? Math.max(p.requestsCompleted / p.maxRequests, p.durationNs ? p.elapsedNs / p.durationNs : 0)
        : p.durationNs
          ? p.elapsedNs / p.durationNs
          : 0;
    const f = Math.min(1, Math.max(0, fraction));
    const filled = Math.round(f * BAR_WIDTH);
    const text =
      `${p.phase.padEnd(9)} [${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}] ${(f * 100).toFixed(0).padStart(3)}% ` +
      `${(p.elapsedNs / 1e9).toFixed(0)}s  req ${p.requestsCompleted}  q ${p.queueDepth}  ` +
      `${tokensPerSecText(p)}  ${storageText(p)}`;
    if (this.#tty) {
      this.#out.write(`\r\x1b[2K${text}`);
      this.#shown = true;
      return;
    }
    const now = process.hrtime.bigint();
    if (now - this.#lastPlainNs >= BigInt(PLAIN_INTERVAL_NS)) {
      this.#lastPlainNs = now;
      this.#out.write(`${text}\n`);
    }
  }

  log(message: string): void {
    if (this.#tty && this.#shown) this.#out.write('\r\x1b[2K');
    this.#out.write(`${message}\n`);
  }

  done(): void {
    if (this.#tty && this.#shown) this.#out.write('\n');
    this.#shown = false;
  }
}
