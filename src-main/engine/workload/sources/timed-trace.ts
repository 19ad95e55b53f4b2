import { inputError } from './input-errors.ts';
import { LineReader, type TextLine } from './line-reader.ts';
import { addStat, newStats, statsOut, type ReplayFeed, type ReplayNames, type ReplaySpec, type TokenStats } from './replay-source.ts';
import { TRACE_USERS } from './source-context.ts';

/** One request row of a timestamped trace. */
export interface TimedRow {
  /** Trace time in seconds (any origin: only differences matter). */
  t: number;
  contextTokens: number;
  generationTokens: number;
  /** Mooncake: IDs of the prompt's 512-token KV blocks. */
  hashIds: number[] | null;
}

/** A timestamped trace format: how to read one file's lines into rows. */
export interface TimedTraceFormat {
  /** For messages and results, e.g. "BurstGPT CSV". */
  readonly label: string;
  /**
   * A parser for one file: it sees every line in order (the first may be a header) and returns a row,
   * or null for a line that is not a request (header, blank). Throws `inputError` on bad input.
   */
  fileParser(file: string): (line: TextLine) => TimedRow | null;
}

/** What the up-front validation pass learned about the whole trace. */
export interface TimedTraceScan {
  /** Each file's requests and length in bytes as validated, to tell when it changes under the replay. */
  files: { path: string; rows: number; bytes: number }[];
  rows: number;
  /** Sum of the non-negative gaps between consecutive rows, seconds (the trace's length). */
  spanS: number;
  /** Rows earlier than the row before them (replayed without a wait). */
  outOfOrderRows: number;
  zeroContextRows: number;
  context: TokenStats;
  generation: TokenStats;
  /** Mooncake: every block ID listed, and the distinct ones (null when too many to count). */
  blocks: { total: number; distinct: number | null } | null;
}

/** Lines a pull reads at once before it checks its block budget again. */
const LINES_PER_READ = 16;

/** Distinct block IDs counted up to this many (memory); beyond, the count is reported as unknown. */
const MAX_DISTINCT_BLOCKS_COUNTED = 10_000_000;

/**
 * Reads every line of every file once, before the run, so that a malformed, truncated or empty trace is
 * refused up front with its file and line, and so the replay knows the trace's length (for cycles).
 * Memory stays bounded: one chunk, one line, and the counters.
 */
export async function scanTimedTrace(files: readonly string[], format: TimedTraceFormat): Promise<TimedTraceScan> {
  const scan: TimedTraceScan = {
    files: [],
    rows: 0,
    spanS: 0,
    outOfOrderRows: 0,
    zeroContextRows: 0,
    context: newStats(),
    generation: newStats(),
    blocks: null,
  };
  let prevT: number | null = null;
  let distinct: Set<number> | null = null;
  for (const file of files) {
    const parse = format.fileParser(file);
    const reader = new LineReader(file);
    let rows = 0;
    await reader.forEach((line) => {
      const row = parse(line);
      if (!row) return;
      rows++;
      if (prevT !== null) {
        if (row.t < prevT) scan.outOfOrderRows++;
        else scan.spanS += row.t - prevT;
      }
      prevT = row.t;
      if (row.contextTokens === 0) scan.zeroContextRows++;
      addStat(scan.context, Math.max(1, row.contextTokens));
      addStat(scan.generation, row.generationTokens);
      if (row.hashIds) {
        scan.blocks ??= { total: 0, distinct: 0 };
        distinct ??= new Set();
        scan.blocks.total += row.hashIds.length;
        if (scan.blocks.distinct !== null) {
          for (const id of row.hashIds) distinct.add(id);
          if (distinct.size > MAX_DISTINCT_BLOCKS_COUNTED) {
            scan.blocks.distinct = null;
            distinct.clear();
          } else {
            scan.blocks.distinct = distinct.size;
          }
        }
      }
    });
    scan.files.push({ path: file, rows, bytes: reader.bytesRead });
    scan.rows += rows;
  }
  if (scan.rows === 0) {
    throw inputError(files.length === 1 ? files[0] : files.join(', '), null, `contains no requests (${format.label}: a header and no rows, or an empty file)`);
  }
  return scan;
}

export interface TimedTraceReplayOptions {
  /** The detected format, for the results (e.g. "burstgpt-csv"). */
  formatName: string;
  /** More facts for the results (per-format statistics). */
  describeExtra?: () => Record<string, unknown>;
  /** Trace seconds per replay second; 0 = no pacing (every arrival at 0, the scheduler bounds the backlog). */
  speedup: number;
  /** Passes over the trace; 0 = until the run ends. */
  replayCycles: number;
  /** Builds the request of one row: users, keys, blocks. `rowInCycle` counts rows within the pass. */
  toSpec: (row: TimedRow, at: { seq: number; cycle: number; rowInCycle: number; arrivalNs: number }) => ReplaySpec;
  /** Distinct users after `issued` requests. */
  activeUsers: (issued: number) => number;
}

/**
 * Replays a scanned trace: arrival of a row = arrival of the row before + (its timestamp − that row's)
 * ÷ speedup (a row earlier than the one before waits nothing), so arrivals never go backwards. Files
 * are read in order as one trace. A later cycle starts one mean inter-arrival gap after the previous
 * cycle's last request and uses its own cache keys (see `cyclePrefix`).
 */
export class TimedTraceFeed implements ReplayFeed {
  readonly #files: readonly string[];
  readonly #format: TimedTraceFormat;
  readonly #scan: TimedTraceScan;
  readonly #o: TimedTraceReplayOptions;
  readonly #cycleGapNs: number;
  #fileIndex = 0;
  #reader: LineReader | null = null;
  #parse: ((line: TextLine) => TimedRow | null) | null = null;
  #cycle = 0;
  #cyclesCompleted = 0;
  #rowInCycle = 0;
  /** Request rows read from the current file in this pass. */
  #rowsInFile = 0;
  #seq = 0;
  #prevT: number | null = null;
  #arrivalNs = 0;
  #gapPending = false;
  #ended = false;
  /** Why the replay stopped early, thrown once the requests read before it are handed out. */
  #failure: Error | null = null;

  constructor(files: readonly string[], format: TimedTraceFormat, scan: TimedTraceScan, opts: TimedTraceReplayOptions) {
    this.#files = files;
    this.#format = format;
    this.#scan = scan;
    this.#o = opts;
    const meanGapS = scan.rows > 1 ? scan.spanS / (scan.rows - 1) : 0;
    // Never zero when paced: a trace whose rows share one timestamp would otherwise loop without time passing.
    this.#cycleGapNs = opts.speedup > 0 ? Math.max(1e6, Math.round((meanGapS > 0 ? meanGapS : 1) * 1e9 / opts.speedup)) : 0;
  }

  async pull(max: number, maxBlocks: number): Promise<ReplaySpec[]> {
    if (this.#failure) throw this.#failure;
    const out: ReplaySpec[] = [];
    let blocks = 0;
    while (out.length < max && blocks < maxBlocks && !this.#ended) {
      if (!this.#reader) {
        this.#reader = new LineReader(this.#files[this.#fileIndex]);
        this.#parse = this.#format.fileParser(this.#files[this.#fileIndex]);
        this.#rowsInFile = 0;
      }
      // A few lines at a time, so a pull of rows with thousands of hash IDs each stops near its budget.
      const lines = await this.#reader.read(Math.min(max - out.length, LINES_PER_READ));
      for (const line of lines) {
        const row = this.#parse!(line);
        if (!row) continue;
        this.#rowsInFile++;
        const spec = this.#spec(row);
        blocks += spec.prefixBlockCount;
        out.push(spec);
      }
      if (!this.#reader.done) continue;
      this.#failure = this.#changedSinceScan(this.#reader);
      if (this.#failure) {
        this.#ended = true;
        if (out.length === 0) throw this.#failure;
        break;
      }
      this.#nextFile();
    }
    return out;
  }

  activeUsers(): number {
    return this.#o.activeUsers(this.#seq);
  }

  describe(): Record<string, unknown> {
    const s = this.#scan;
    return {
      format: this.#o.formatName,
      files: s.files.map((f) => ({ path: f.path, requests: f.rows })),
      trace_requests: s.rows,
      trace_span_s: s.spanS,
      out_of_order_rows: s.outOfOrderRows,
      zero_context_rows: s.zeroContextRows,
      trace_context_tokens: statsOut(s.context),
      trace_generation_tokens: statsOut(s.generation),
      pacing: this.#o.speedup > 0 ? { mode: 'timestamps', trace_speedup: this.#o.speedup } : { mode: 'unpaced', trace_speedup: 0 },
      replay_cycles: this.#o.replayCycles,
      ...this.#o.describeExtra?.(),
    };
  }

  #spec(row: TimedRow): ReplaySpec {
    if (this.#o.speedup > 0) {
      if (this.#gapPending) this.#arrivalNs += this.#cycleGapNs;
      else if (this.#prevT !== null && row.t > this.#prevT) this.#arrivalNs += Math.round(((row.t - this.#prevT) * 1e9) / this.#o.speedup);
    }
    this.#gapPending = false;
    this.#prevT = row.t;
    const spec = this.#o.toSpec(row, { seq: this.#seq, cycle: this.#cycle, rowInCycle: this.#rowInCycle, arrivalNs: this.#arrivalNs });
    this.#seq++;
    this.#rowInCycle++;
    return spec;
  }

  /**
   * A file that still parses but was truncated, rotated or rewritten since the validation pass ends
   * at another row than validated: the pass would otherwise count as complete with requests missing.
   */
  #changedSinceScan(reader: LineReader): Error | null {
    const scanned = this.#scan.files[this.#fileIndex];
    if (this.#rowsInFile === scanned.rows && reader.bytesRead === scanned.bytes) return null;
    return inputError(
      reader.file,
      null,
      `the file changed during the replay: this pass read ${this.#rowsInFile} requests (${reader.bytesRead} bytes), ` +
        `the validation before the run ${scanned.rows} (${scanned.bytes} bytes); the replay stopped there`,
    );
  }

  #nextFile(): void {
    this.#reader = null;
    this.#parse = null;
    this.#fileIndex++;
    if (this.#fileIndex < this.#files.length) return;
    this.#fileIndex = 0;
    this.#cyclesCompleted++;
    if (this.#o.replayCycles > 0 && this.#cyclesCompleted >= this.#o.replayCycles) {
      this.#ended = true;
      return;
    }
    this.#cycle++;
    this.#rowInCycle = 0;
    this.#prevT = null;
    this.#gapPending = true;
  }
}

/**
 * One trace row as replayed: a single-turn request of user `trace_user_{seq % 1000}` (the reference's
 * trace users); each format names its keys. `seq` counts on across cycles.
 */
export abstract class TraceRowSpec implements ReplaySpec {
  readonly arrivalNs: number;
  readonly cycle: number;
  protected readonly seq: number;
  readonly contextTokens: number;
  readonly generationTokens: number;

  constructor(arrivalNs: number, cycle: number, seq: number, contextTokens: number, generationTokens: number) {
    this.arrivalNs = arrivalNs;
    this.cycle = cycle;
    this.seq = seq;
    this.contextTokens = contextTokens;
    this.generationTokens = generationTokens;
  }

  get userIndex(): number {
    return this.seq % TRACE_USERS;
  }

  get conversationId(): null {
    return null;
  }

  get turn(): number {
    return 1;
  }

  get prefixBlockCount(): number {
    return 0;
  }

  abstract names(): ReplayNames;
}
