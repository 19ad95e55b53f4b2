// Reading what a damaged database still holds (PRAGMA quick_check fails: pages overwritten, a torn
// write): every table is copied row by row into a sound database, and what cannot be read is left
// out and said. A query on the damaged file itself stops at the first bad page it meets ("database
// disk image is malformed"), and which pages a query meets depends on its plan (an index page lost
// hides every trial a filtered listing reads through it), so the commands that only read work on the
// copy, never on the file. The file is only read.
//
// A table is read in key order (the rowid, or a WITHOUT ROWID table's first key column, an id in
// every kvbench table); where a read fails, seeks past the failing key find where rows can be read
// again (one seek reads one path of the b-tree, so a bad page costs only the keys it holds), and the
// keys skipped are recorded. Rows SQLite would read without a word though their bytes are damaged
// (the end of a row on an overflow page of garbage) are found first (placeDamage) and not copied.
//
// Then what the copy lost is said as the stored rows it affects: a trial whose row, metrics or
// histograms, suite or system could not be read is left out (a trial without its metrics would read
// as one that measured nothing); an endpoint run the same for its metrics and requests.
import fs from 'node:fs';
import type { Database, SqlParams, SqlValue, Statement } from './sqlite.ts';
import { StoreError } from './store-error.ts';

/** better-sqlite3's statements also step through their rows: those before a row that cannot be read are had before it throws. */
type SteppingStatement = Statement & { iterate(...params: SqlParams): IterableIterator<unknown> };

/** A damaged database nothing can be read from: the refusal of the commands that only read. */
export function unreadableDatabase(file: string, why: string): StoreError {
  return new StoreError('DB_CORRUPT', `${file} is damaged and cannot be read (${why}): restore a backup, or move it away.`);
}

/** Keys of one table that could not be read: `from` through `to`, both included (`to` null: to the end). */
interface KeyRange {
  from: number;
  to: number | null;
}

/** The keys of a narrow gap are looked up one by one (a deleted id is no lost row); wider gaps are said as ranges. */
const KEY_BY_KEY_MAX = 256;

/**
 * Hears how far a salvage has come: the table being copied, its rows read so far, and its last key
 * where that can be read (kvbench's ids count up from 1, so `rowsRead` of about `lastKey`). Called
 * every PROGRESS_EVERY_ROWS rows, from the copy's own loop: what it does costs the copy.
 */
export type SalvageProgress = (table: string, rowsRead: number, lastKey: number | null) => void;
const PROGRESS_EVERY_ROWS = 500;

/** What one table's copy could not read: the keys whose rows were not copied (each, or a range where a read could not even find which exist). */
interface TableLoss {
  lost: KeyRange[];
}

/** The tables whose rows belong to a parent row (by `column`, their first key): lost child rows cost the parent. */
const CHILD_OF: Readonly<Record<string, { parent: string; column: string }>> = {
  trial_metrics: { parent: 'trials', column: 'trial_id' },
  trial_histograms: { parent: 'trials', column: 'trial_id' },
  endpoint_run_metrics: { parent: 'endpoint_runs', column: 'run_id' },
  endpoint_requests: { parent: 'endpoint_runs', column: 'run_id' },
};

/** How the notes name a table's rows (one, several), and a child table's rows as part of their parent. */
const ROW_WORDS: Readonly<Record<string, readonly [one: string, many: string]>> = {
  systems: ['system', 'systems'],
  drives: ['drive', 'drives'],
  hardware_snapshots: ['hardware snapshot', 'hardware snapshots'],
  suites: ['suite', 'suites'],
  runs: ['suite run', 'suite runs'],
  trials: ['trial', 'trials'],
  trial_metrics: ['metrics', 'metrics'],
  trial_histograms: ['latency histograms', 'latency histograms'],
  endpoint_runs: ['endpoint run', 'endpoint runs'],
  endpoint_run_metrics: ['metrics', 'metrics'],
  endpoint_requests: ['requests', 'requests'],
};
const rowWords = (table: string): readonly [string, string] => ROW_WORDS[table] ?? [`row of ${table}`, `rows of ${table}`];

/** Said after the rows of a table that could not be read: what losing them costs (trials and endpoint runs: themselves). */
const CONSEQUENCE: Readonly<Record<string, string>> = {
  trials: 'left out',
  endpoint_runs: 'left out',
  hardware_snapshots: 'their trials are shown without their hardware',
  drives: 'their trials are shown without their drive',
  runs: 'a resume of their suites cannot run them',
};

/** Ranges merged where they touch or overlap, ascending. */
function mergeRanges(ranges: readonly KeyRange[]): KeyRange[] {
  const end = (r: KeyRange): number => r.to ?? Infinity;
  const out: KeyRange[] = [];
  for (const r of [...ranges].sort((a, b) => a.from - b.from)) {
    const last = out[out.length - 1];
    if (last && r.from <= end(last) + 1) last.to = end(r) > end(last) ? r.to : last.to;
    else out.push({ ...r });
  }
  return out;
}

const rangeText = (r: KeyRange): string => (r.to === null ? `${r.from} and above` : r.from === r.to ? String(r.from) : `${r.from}–${r.to}`);
const isOne = (ranges: readonly KeyRange[]): boolean => ranges.length === 1 && ranges[0].from === ranges[0].to;

/** "3, 5–9": ids, ascending, runs of consecutive ones joined. */
function idList(ids: Iterable<number>): string {
  return mergeRanges([...ids].map((id) => ({ from: id, to: id }))).map(rangeText).join(', ');
}

/** A salvage's progress in words: "copying trials: 4,000 rows of about 10,000". */
export function salvageProgressText(table: string, rowsRead: number, lastKey: number | null): string {
  const n = (x: number): string => x.toLocaleString('en-US');
  return `copying ${rowWords(table)[1]}: ${n(rowsRead)} rows${lastKey !== null && lastKey >= rowsRead ? ` of about ${n(lastKey)}` : ''}`;
}

const quoteId = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/**
 * Copies one table from `src` into the same table of `dst`, as far as its rows can be read; the rows
 * of `suspect` keys (bytes on a damaged page that SQLite reads without a word: placeDamage) are not.
 */
function copyTable(src: Database, dst: Database, table: string, suspect: ReadonlySet<number>, progress?: SalvageProgress): TableLoss {
  const info = dst.prepare('SELECT name, pk FROM pragma_table_info(?) ORDER BY cid').all(table) as { name: string; pk: number }[];
  const srcColumns = new Set((src.prepare('SELECT name FROM pragma_table_info(?)').all(table) as { name: string }[]).map((c) => c.name));
  // Columns a later migration added are not in an older file: the copy's migration fills them.
  const columns = info.filter((c) => srcColumns.has(c.name));
  // Not in the file's schema as it reads (its page damaged): none of its rows can be found.
  if (srcColumns.size === 0) return { lost: [{ from: 1, to: null }] };
  const withoutRowid = (dst.prepare('SELECT wr FROM pragma_table_list WHERE name = ?').get(table) as { wr: number } | undefined)?.wr === 1;
  const keyColumn = withoutRowid ? info.find((c) => c.pk === 1)!.name : 'rowid';
  const key = quoteId(keyColumn);
  const list = columns.map((c) => quoteId(c.name)).join(', ');
  const from = `FROM main.${quoteId(table)}`;
  if (withoutRowid && !integerKeyed(dst, table, keyColumn)) return copyTextKeyed(src, dst, table, columns.map((c) => c.name));
  const scan = src.prepare(`SELECT ${key} AS "__key", ${list} ${from} WHERE ${key} > ? ORDER BY ${key}`);
  const seek = src.prepare(`SELECT ${key} AS "__key", ${list} ${from} WHERE ${key} > ? ORDER BY ${key} LIMIT 1`);
  const insert = dst.prepare(`INSERT INTO main.${quoteId(table)} (${withoutRowid ? '' : 'rowid, '}${list}) VALUES (${withoutRowid ? '' : '?, '}${columns.map(() => '?').join(', ')})`);
  const loss: TableLoss = { lost: [] };
  let rowsRead = 0;
  // The table's last key as far as it reads (null: it cannot): how far the copy has to go, for progress only.
  let lastKey: number | null = null;
  if (progress) {
    try {
      const last = (src.prepare(`SELECT max(${key}) AS k ${from}`).get() as { k: unknown }).k;
      lastKey = typeof last === 'number' ? last : null;
    } catch {
      // its last pages cannot be read: progress says the rows copied only
    }
  }

  const put = (k: number, values: SqlValue[]): boolean => {
    try {
      insert.run(...(withoutRowid ? values : [k, ...values]));
      return true;
    } catch {
      return false; // bytes that read as a row but break the schema's rules (a damaged page SQLite did not see as one)
    }
  };
  const readable = (after: number): boolean => {
    try {
      seek.all(after);
      return true;
    } catch {
      return false;
    }
  };

  let after = 0; // kvbench's ids start at 1
  let readInGroup = false; // a row of key `after` was read: its key group (WITHOUT ROWID) may be incomplete
  for (;;) {
    try {
      for (const row of (scan as SteppingStatement).iterate(after) as Iterable<Record<string, SqlValue>>) {
        const k = row.__key;
        if (typeof k !== 'number' || !Number.isSafeInteger(k) || k <= after - (withoutRowid ? 1 : 0)) throw new Error('a key out of order');
        if (suspect.has(k) || !put(k, columns.map((c) => row[c.name]))) loss.lost.push({ from: k, to: k });
        after = k;
        readInGroup = true;
        if (progress && ++rowsRead % PROGRESS_EVERY_ROWS === 0) progress(table, rowsRead, lastKey);
      }
      return loss;
    } catch {
      // The row after `after`, or a page on the way to it, cannot be read: find the first key past
      // which rows can be read again (doubling, then halving back), and skip what lies between.
      let step = 1;
      while (!readable(after + step)) {
        if (after + step * 2 > Number.MAX_SAFE_INTEGER) {
          loss.lost.push({ from: withoutRowid && readInGroup ? after : after + 1, to: null });
          return loss;
        }
        step *= 2;
      }
      let lo = step === 1 ? 0 : step / 2;
      let hi = step;
      while (hi - lo > 1) {
        const mid = Math.floor((lo + hi) / 2);
        if (readable(after + mid)) hi = mid;
        else lo = mid;
      }
      const gap: KeyRange = { from: withoutRowid && readInGroup ? after : after + 1, to: after + hi };
      if (withoutRowid || hi > KEY_BY_KEY_MAX) loss.lost.push(gap);
      else keyByKey(gap);
      after += hi;
      readInGroup = false;
    }
  }

  /** A narrow gap of a rowid table: which of its keys held a row (a key SQLite cannot even look up is counted as one). */
  function keyByKey(gap: KeyRange): void {
    const exists = src.prepare(`SELECT 1 ${from} WHERE rowid = ?`);
    for (let k = gap.from; k <= gap.to!; k++) {
      try {
        if (exists.get(k) === undefined) continue; // no row: a deleted id
      } catch {
        // its page cannot be read
      }
      loss.lost.push({ from: k, to: k });
    }
  }
}

/** Whether a WITHOUT ROWID table's key is declared INTEGER: the walk by key copyTable makes needs whole-number keys. */
function integerKeyed(db: Database, table: string, keyColumn: string): boolean {
  const type = (db.prepare('SELECT type FROM pragma_table_info(?) WHERE name = ?').get(table, keyColumn) as { type: string } | undefined)?.type ?? '';
  return /INT/i.test(type);
}

/**
 * A table keyed by text (kvbench_meta's shape) in one scan: its keys cannot be walked as numbers (the
 * walk past a damaged page once looped without end on one), and such a table is small. A row that
 * cannot be read loses the rest of it, said as the table's rows from the first.
 */
function copyTextKeyed(src: Database, dst: Database, table: string, names: string[]): TableLoss {
  const list = names.map(quoteId).join(', ');
  const insert = dst.prepare(`INSERT INTO main.${quoteId(table)} (${list}) VALUES (${names.map(() => '?').join(', ')})`);
  try {
    for (const row of (src.prepare(`SELECT ${list} FROM main.${quoteId(table)}`) as SteppingStatement).iterate() as Iterable<Record<string, SqlValue>>) {
      insert.run(...names.map((n) => row[n]));
    }
    return { lost: [] };
  } catch {
    return { lost: [{ from: 1, to: null }] };
  }
}

/** A SQLite varint at `at`: its value (where it fits a double exactly) and its length. */
function varint(page: Buffer, at: number): { value: number; bytes: number } {
  let value = 0;
  for (let i = 0; i < 9; i++) {
    const byte = page[at + i];
    if (byte === undefined) throw new Error('a varint past the end of the page');
    if (i === 8) return { value: value * 256 + byte, bytes: 9 };
    value = value * 128 + (byte & 0x7f);
    if ((byte & 0x80) === 0) return { value, bytes: i + 1 };
  }
  throw new Error('unreachable');
}

/** The pages of the file as SQLite laid them out (its file format), read directly: what the checks below look at. */
class FilePages {
  readonly pageBytes: number;
  /** Bytes of a page b-tree content may use (the page less the reserved bytes at its end). */
  readonly usableBytes: number;
  readonly pageCount: number;
  private readonly fd: number;

  constructor(file: string, pageBytes: number) {
    this.fd = fs.openSync(file, 'r');
    this.pageBytes = pageBytes;
    this.pageCount = Math.floor(fs.fstatSync(this.fd).size / pageBytes);
    this.usableBytes = pageBytes - (this.read(1)?.[20] ?? 0);
  }

  /** Page `n` (1-based), or null where the file has none. */
  read(n: number): Buffer | null {
    if (!Number.isSafeInteger(n) || n < 1 || n > this.pageCount) return null;
    const page = Buffer.alloc(this.pageBytes);
    return fs.readSync(this.fd, page, 0, this.pageBytes, (n - 1) * this.pageBytes) === this.pageBytes ? page : null;
  }

  close(): void {
    fs.closeSync(this.fd);
  }
}

const TABLE_INTERIOR = 0x05;
const TABLE_LEAF = 0x0d;
const INDEX_INTERIOR = 0x02;
const INDEX_LEAF = 0x0a;

/**
 * Cell `cell` of b-tree page `pageNo` that holds a row: its key (a rowid table's rowid, or the first
 * key column of a WITHOUT ROWID table's record, an integer id) and whether the part of it on
 * overflow pages is whole (each page of the chain one the file has, the last one ending it). A broken
 * chain is what SQLite reads without a word: the last page's bytes are taken as the row's last
 * columns whatever they hold. Null where the cell holds no row (a rowid table's interior page) or
 * cannot be parsed.
 */
function rowCell(pages: FilePages, pageNo: number, cell: number, page = pages.read(pageNo)): { key: number; overflowWhole: boolean } | null {
  if (!page) return null;
  try {
    const header = pageNo === 1 ? 100 : 0;
    const type = page[header];
    if (type !== TABLE_LEAF && type !== INDEX_LEAF && type !== INDEX_INTERIOR) return null;
    if (cell >= page.readUInt16BE(header + 3)) return null;
    let at = page.readUInt16BE(header + (type === INDEX_INTERIOR ? 12 : 8) + 2 * cell);
    if (type === INDEX_INTERIOR) at += 4; // the child page
    const payload = varint(page, at);
    at += payload.bytes;
    let key: number;
    if (type === TABLE_LEAF) {
      const rowid = varint(page, at);
      key = rowid.value;
      at += rowid.bytes;
    } else {
      // A record: its header's length, the first column's serial type, then the values.
      const headerLength = varint(page, at);
      const serial = varint(page, at + headerLength.bytes).value;
      const body = at + headerLength.value;
      const intBytes = [0, 1, 2, 3, 4, 6, 8][serial];
      if (serial === 8 || serial === 9) key = serial - 8;
      else if (intBytes === undefined || intBytes === 0) return null;
      else key = intBytes === 8 ? Number(page.readBigInt64BE(body)) : page.readIntBE(body, intBytes);
    }
    // How much of the payload the page holds (SQLite's file format: "cell payload overflow pages").
    const u = pages.usableBytes;
    const x = type === TABLE_LEAF ? u - 35 : Math.floor(((u - 12) * 64) / 255) - 23;
    if (payload.value <= x) return { key, overflowWhole: true };
    const m = Math.floor(((u - 12) * 32) / 255) - 23;
    const k = m + ((payload.value - m) % (u - 4));
    const local = k <= x ? k : m;
    let next = page.readUInt32BE(at + local);
    const seen = new Set<number>();
    for (let left = payload.value - local; left > 0; left -= u - 4) {
      const overflow = seen.has(next) ? null : pages.read(next);
      if (!overflow) return { key, overflowWhole: false };
      seen.add(next);
      next = overflow.readUInt32BE(0);
    }
    return { key, overflowWhole: next === 0 };
  } catch {
    return null;
  }
}

/**
 * The keys of `root`'s b-tree whose rows run onto a broken overflow chain, walking its pages from the
 * file; pages that cannot be parsed are passed over (SQLite cannot read them either: their rows are
 * lost in the copy, and said).
 */
function brokenOverflowKeys(pages: FilePages, root: number): Set<number> {
  const keys = new Set<number>();
  const seen = new Set<number>();
  const stack = [root];
  while (stack.length > 0) {
    const pageNo = stack.pop()!;
    if (seen.has(pageNo)) continue;
    seen.add(pageNo);
    const page = pages.read(pageNo);
    if (!page) continue;
    const header = pageNo === 1 ? 100 : 0;
    const type = page[header];
    if (type !== TABLE_INTERIOR && type !== TABLE_LEAF && type !== INDEX_INTERIOR && type !== INDEX_LEAF) continue;
    const interior = type === TABLE_INTERIOR || type === INDEX_INTERIOR;
    // A cell count or pointer past the page: garbage, as SQLite also finds it.
    const cells = Math.min(page.readUInt16BE(header + 3), Math.floor((page.length - header - 12) / 2));
    if (interior) {
      stack.push(page.readUInt32BE(header + 8));
      for (let c = 0; c < cells; c++) {
        const at = page.readUInt16BE(header + 12 + 2 * c);
        if (at + 4 <= page.length) stack.push(page.readUInt32BE(at));
      }
    }
    if (type === TABLE_INTERIOR) continue;
    for (let c = 0; c < cells; c++) {
      const row = rowCell(pages, pageNo, c, page);
      if (row && !row.overflowWhole) keys.add(row.key);
    }
  }
  return keys;
}

/** What quick_check found, placed: the rows whose bytes lie on a damaged page, and whether every finding could be placed. */
export interface PlacedDamage {
  /** Table → keys of its rows SQLite reads without a word, though their bytes are damaged. */
  suspects: Map<string, Set<number>>;
  /** Every finding is placed: in a row named in `suspects`, an index (rebuilt in a copy), or unused pages. */
  allPlaced: boolean;
}

/**
 * Finds the rows SQLite would read without a word though their bytes are damaged: those whose
 * overflow chain is broken (read from the file, every table), and those quick_check's findings
 * (its lines, "*** in database main ***" dropped; null where the check itself could not run) name
 * as "Tree R page P cell C: …" in a table. A finding in an index, or on a free page, costs no row.
 * With a -wal holding changes the file's pages are not what SQLite reads: nothing is placed.
 */
export function placeDamage(src: Database, file: string, findings: readonly string[] | null, walHoldsChanges: boolean): PlacedDamage {
  const suspects = new Map<string, Set<number>>();
  if (walHoldsChanges) return { suspects, allPlaced: false };
  const suspect = (table: string, key: number): void => {
    let keys = suspects.get(table);
    if (!keys) suspects.set(table, (keys = new Set()));
    keys.add(key);
  };
  const pages = new FilePages(file, Number(src.pragma('page_size', { simple: true })));
  try {
    const roots = (src.prepare("SELECT rootpage, type, name FROM sqlite_schema WHERE type IN ('table', 'index') AND rootpage > 0").all() as { rootpage: number; type: string; name: string }[]);
    for (const r of roots) if (r.type === 'table') for (const key of brokenOverflowKeys(pages, r.rootpage)) suspect(r.name, key);
    if (findings === null) return { suspects, allPlaced: false };
    const byRoot = new Map(roots.map((r) => [r.rootpage, r]));
    let allPlaced = true;
    for (const finding of findings) {
      const tree = /^Tree (\d+) page (\d+)(?: cell (\d+))?: /.exec(finding);
      if (tree) {
        const root = byRoot.get(Number(tree[1]));
        if (root?.type === 'index') continue;
        const row = root && tree[3] !== undefined ? rowCell(pages, Number(tree[2]), Number(tree[3])) : null;
        if (row) suspect(root!.name, row.key);
        else allPlaced = false;
        continue;
      }
      if (!/(missing from|wrong # of entries in|non-unique entry in) index |never used|freelist/i.test(finding)) allPlaced = false;
    }
    return { suspects, allPlaced };
  } finally {
    pages.close();
  }
}

/** The tables whose ids kvbench shows, and so never gives twice (schema-meta's ShownIdTable). */
const SHOWN_ID_TABLES = ['trials', 'suites', 'endpoint_runs'] as const;

/**
 * The largest id a shown table of the damaged file is known to have given: what the copy of a
 * database without kvbench's own record of it (a file no build since 0.7.0 wrote, or one whose
 * kvbench_meta page is lost) must not give again, though the rows that held the largest ids may be
 * exactly those lost. `exact`: the table's largest key could be read (from its own pages or from an
 * index over all its rows); otherwise `largest` is only the largest seen, and ids above it may have
 * been given on the pages that could not be read.
 */
export interface IdsSeen {
  largest: number;
  exact: boolean;
}

/** What salvageRows copied: the notes on what could not be read, and each shown table's largest id known to have been given (IdsSeen). */
export interface Salvage {
  notes: string[];
  idsSeen: Map<string, IdsSeen>;
}

/** The largest rowid `sql` reads from the damaged file, or null where it cannot be read (or holds none, or reads as nonsense). */
function largestRead(src: Database, sql: string): number | null {
  try {
    const k = (src.prepare(sql).get() as { k: unknown } | undefined)?.k;
    return typeof k === 'number' && Number.isSafeInteger(k) && k > 0 ? k : null;
  } catch {
    return null;
  }
}

/**
 * IdsSeen for each shown table, read before any row is taken out of the copy: the largest of its
 * copied ids, the ids its copied children and referring rows name (trial_metrics.trial_id,
 * trials.suite_id …), the keys it lost, and its largest key in the damaged file, read from the
 * table itself or, where its last pages are damaged, from any full index over it (which holds every
 * rowid on pages of its own).
 */
function shownIdsSeen(src: Database, dst: Database, tables: readonly string[], losses: ReadonlyMap<string, TableLoss>): Map<string, IdsSeen> {
  const seen = new Map<string, IdsSeen>();
  for (const table of SHOWN_ID_TABLES) {
    if (!tables.includes(table)) continue;
    const found = [largestRead(dst, `SELECT max(rowid) AS k FROM ${quoteId(table)}`) ?? 0];
    for (const other of tables) {
      const refs = dst.prepare('SELECT "from" AS col FROM pragma_foreign_key_list(?) WHERE "table" = ?').all(other, table) as { col: string }[];
      for (const r of refs) found.push(largestRead(dst, `SELECT max(${quoteId(r.col)}) AS k FROM ${quoteId(other)}`) ?? 0);
    }
    const lost = losses.get(table)?.lost ?? [];
    for (const r of lost) found.push(r.to ?? r.from - 1);
    let exact = !lost.some((r) => r.to === null);
    if (!exact) {
      const indexes = src.prepare("SELECT name FROM pragma_index_list(?) WHERE partial = 0").all(table) as { name: string }[];
      for (const source of [`FROM main.${quoteId(table)}`, ...indexes.map((i) => `FROM main.${quoteId(table)} INDEXED BY ${quoteId(i.name)}`)]) {
        const k = largestRead(src, `SELECT max(rowid) AS k ${source}`);
        if (k !== null) {
          found.push(k);
          exact = true;
          break;
        }
      }
    }
    seen.set(table, { largest: Math.max(...found), exact });
  }
  return seen;
}

/**
 * Copies every table of `src` into `dst` (the same schema, empty, foreign keys off) as far as it can
 * be read, then removes from the copy what it cannot show whole, and says what was lost: the notes,
 * each naming `file` (empty where everything was read), and the ids the file is known to have given.
 */
export function salvageRows(src: Database, dst: Database, file: string, suspects: ReadonlyMap<string, ReadonlySet<number>> = new Map(), progress?: SalvageProgress): Salvage {
  const tables = (dst.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY rowid").all() as { name: string }[]).map((r) => r.name);
  // A schema that names none of them (its pages damaged) leaves nothing to find: said by the caller as a database that cannot be read.
  if (!tables.some((t) => (src.prepare('SELECT 1 FROM pragma_table_info(?)').all(t) as unknown[]).length > 0)) {
    throw unreadableDatabase(file, 'its schema, on a damaged page, names none of its tables');
  }
  const losses = new Map<string, TableLoss>();
  dst.exec('BEGIN');
  try {
    for (const t of tables) losses.set(t, copyTable(src, dst, t, suspects.get(t) ?? new Set(), progress));
    dst.exec('COMMIT');
  } catch (err) {
    if (dst.inTransaction) dst.exec('ROLLBACK');
    throw err;
  }
  const idsSeen = shownIdsSeen(src, dst, tables, losses);
  const notes: string[] = [];
  const leftOut = new Map<string, Map<number, string[]>>(); // parent table → id → its parts that could not be read
  const leave = (table: string, id: number, part: string): void => {
    let m = leftOut.get(table);
    if (!m) leftOut.set(table, (m = new Map()));
    const parts = m.get(id) ?? [];
    if (!parts.includes(part)) parts.push(part);
    m.set(id, parts);
  };
  for (const [table, loss] of losses) {
    const [one, many] = rowWords(table);
    const child = CHILD_OF[table];
    const lost = mergeRanges(loss.lost);
    if (lost.length > 0) {
      const inLost = (column: string): string => `(${lost.map((r) => `(${column} >= ${r.from} AND ${column} <= ${r.to ?? Number.MAX_SAFE_INTEGER})`).join(' OR ')})`;
      if (child) {
        // The parents whose rows these are: those the copy holds lose them (the rest are gone anyway).
        const ids = dst.prepare(`SELECT id FROM ${quoteId(child.parent)} WHERE ${inLost('id')}`).all() as { id: number }[];
        for (const { id } of ids) leave(child.parent, id, many);
      } else {
        // Which of the ids held a row is known where a row of its children was read.
        const children = Object.entries(CHILD_OF).filter(([c, x]) => x.parent === table && tables.includes(c));
        const known = new Set(
          children.length === 0
            ? []
            : (dst.prepare(children.map(([c, x]) => `SELECT ${quoteId(x.column)} AS id FROM ${quoteId(c)} WHERE ${inLost(quoteId(x.column))}`).join(' UNION ')).all() as { id: number }[]).map((r) => r.id),
        );
        const ids = lost.reduce((n, r) => n + (r.to === null ? Infinity : r.to - r.from + 1), 0);
        const held = known.size > 0 && known.size < ids ? `; at least ${known.size} of these ids held ${known.size === 1 ? `a ${one}` : many}: ${idList(known)}` : '';
        const consequence = CONSEQUENCE[table];
        const which = lost.length === 1 && lost[0].from <= 1 && lost[0].to === null ? `every ${one}` : `${isOne(lost) ? one : many} ${lost.map(rangeText).join(', ')}`;
        notes.push(`${which} in ${file} could not be read (${isOne(lost) ? 'a damaged page' : 'damaged pages'}${held})${consequence ? `: ${consequence}` : ''}`);
      }
    }
  }
  // A trial whose suite or system is lost is not listed by anything (they are joined): said, and removed.
  if (tables.includes('trials')) {
    const orphans = dst
      .prepare(
        `SELECT t.id, su.id IS NULL AS noSuite, s.id IS NULL AS noSystem FROM trials t LEFT JOIN suites su ON su.id = t.suite_id LEFT JOIN systems s ON s.id = t.system_id
          WHERE su.id IS NULL OR s.id IS NULL`,
      )
      .all() as { id: number; noSuite: number; noSystem: number }[];
    for (const o of orphans) {
      if (o.noSuite) leave('trials', o.id, 'suite');
      if (o.noSystem) leave('trials', o.id, 'system');
    }
  }
  for (const [table, ids] of leftOut) {
    const children = Object.entries(CHILD_OF).filter(([c, x]) => x.parent === table && tables.includes(c));
    const byParts = new Map<string, number[]>();
    for (const [id, parts] of ids) {
      const key = parts.join(' and ');
      byParts.set(key, [...(byParts.get(key) ?? []), id]);
      for (const [c, x] of children) dst.prepare(`DELETE FROM ${quoteId(c)} WHERE ${quoteId(x.column)} = ?`).run(id);
      dst.prepare(`DELETE FROM ${quoteId(table)} WHERE id = ?`).run(id);
    }
    const [one, many] = rowWords(table);
    for (const [parts, list] of byParts) {
      const single = list.length === 1;
      notes.push(`${single ? one : many} ${idList(list)} in ${file} ${single ? 'is' : 'are'} left out: ${single ? 'its' : 'their'} ${parts} could not be read (damaged pages)`);
    }
  }
  return { notes, idsSeen };
}
