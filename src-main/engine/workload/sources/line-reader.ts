import fsp from 'node:fs/promises';
import { KvbenchError } from '../../../../src-shared/domain/errors.ts';
import { inputError, unreadable } from './input-errors.ts';
import { crOnlyLineEndings, encodingProblem, utf8Text } from './text-encoding.ts';

/** Lines longer than this are refused: no trace format needs them, and they would cost unbounded memory. */
export const MAX_LINE_BYTES = 1024 * 1024;
const READ_CHUNK_BYTES = 256 * 1024;
const NEWLINE = 0x0a;

export interface TextLine {
  text: string;
  /** 1-based. */
  lineNo: number;
}

/**
 * Reads a text file line by line in bounded memory (one chunk plus at most one line), and can stop and
 * resume: each `read` opens the file, continues from where the previous one stopped and closes it
 * again, so a paused replay holds no file handle. `\n` and `\r\n` endings; a UTF-8 byte-order mark is
 * dropped; a last line without a newline still counts. Text must be UTF-8: a compressed or UTF-16
 * file, a byte that is not UTF-8, or lines ending in CR alone are refused with the file and line.
 */
export class LineReader {
  readonly file: string;
  readonly #maxLineBytes: number;
  /** Bytes of the file consumed into `#pending` so far. */
  #offset = 0;
  /** Read but not yet split into lines. */
  #pending: Buffer = Buffer.alloc(0);
  #lineNo = 0;
  #fileEnded = false;
  #done = false;
  /** A line with more than whitespace has been returned. */
  #sawText = false;

  constructor(file: string, opts: { maxLineBytes?: number } = {}) {
    this.file = file;
    this.#maxLineBytes = opts.maxLineBytes ?? MAX_LINE_BYTES;
  }

  /** True once every line has been returned. */
  get done(): boolean {
    return this.#done;
  }

  /** Bytes read from the file so far (all of it once `done`). */
  get bytesRead(): number {
    return this.#offset;
  }

  /** The number of the last line returned. */
  get lineNo(): number {
    return this.#lineNo;
  }

  /** Up to `maxLines` next lines; fewer only at the end of the file. */
  async read(maxLines: number): Promise<TextLine[]> {
    const out: TextLine[] = [];
    if (this.#done) return out;
    let fh: fsp.FileHandle | null = null;
    try {
      while (out.length < maxLines) {
        const nl = this.#pending.indexOf(NEWLINE);
        if (nl >= 0) {
          out.push(this.#line(this.#pending.subarray(0, nl)));
          this.#pending = this.#pending.subarray(nl + 1);
          continue;
        }
        if (this.#pending.length > this.#maxLineBytes) throw this.#tooLong();
        if (this.#fileEnded) {
          if (this.#pending.length > 0) out.push(this.#line(this.#pending));
          this.#pending = Buffer.alloc(0);
          this.#done = true;
          break;
        }
        if (!fh) fh = await this.#open();
        const chunk = Buffer.allocUnsafe(READ_CHUNK_BYTES);
        let bytesRead: number;
        try {
          ({ bytesRead } = await fh.read(chunk, 0, READ_CHUNK_BYTES, this.#offset));
        } catch (err) {
          throw unreadable(this.file, err);
        }
        if (bytesRead === 0) {
          this.#fileEnded = true;
          continue;
        }
        if (this.#offset === 0) {
          const problem = encodingProblem(chunk.subarray(0, bytesRead));
          if (problem) throw inputError(this.file, null, problem);
        }
        this.#offset += bytesRead;
        // A fresh buffer, so the unread rest never pins an old chunk.
        this.#pending = Buffer.concat([this.#pending, chunk.subarray(0, bytesRead)]);
      }
    } finally {
      await fh?.close().catch(() => undefined);
    }
    return out;
  }

  /** Every remaining line, `batch` at a time, to `fn` (a validation pass). */
  async forEach(fn: (line: TextLine) => void, batch = 4096): Promise<void> {
    while (!this.#done) for (const line of await this.read(batch)) fn(line);
  }

  async #open(): Promise<fsp.FileHandle> {
    try {
      return await fsp.open(this.file, 'r');
    } catch (err) {
      throw unreadable(this.file, err);
    }
  }

  #line(bytes: Buffer): TextLine {
    if (bytes.length > this.#maxLineBytes) throw this.#tooLong();
    this.#lineNo++;
    let end = bytes.length;
    if (end > 0 && bytes[end - 1] === 0x0d) end--;
    let text = utf8Text(this.file, bytes.subarray(0, end), this.#lineNo);
    if (this.#lineNo === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    if (!this.#sawText && text.trim() !== '') {
      this.#sawText = true;
      if (text.includes('\r')) throw crOnlyLineEndings(this.file, this.#lineNo);
    }
    return { text, lineNo: this.#lineNo };
  }

  #tooLong(): KvbenchError {
    return inputError(this.file, this.#lineNo + 1, `line is longer than ${this.#maxLineBytes / (1024 * 1024)} MiB (is this a text trace file?)`);
  }
}
