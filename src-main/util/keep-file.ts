import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { removeCreatedDirs } from './created-dirs.ts';
import { statOrNull } from './stat-or-null.ts';
import { resolveOutputTarget, type OutputTarget } from './write-file-atomic.ts';

/** Where a file that must not be lost went (null: nowhere), and why each place before it refused. */
export interface KeptFile {
  path: string | null;
  /** `DIR: why`, one per directory that could not take the file, in the order tried. */
  failures: string[];
}

/**
 * A place to keep the file: a directory that must exist already, or one created for it (with its
 * missing parents) and removed again when the file cannot be written there, so a full disk is not
 * left with an empty folder.
 */
export type KeepPlace = string | { dir: string; create: true };

/** Names tried per directory (`name`, `name-2`, …) before it counts as unusable. */
const MAX_NAMES_PER_DIR = 100;

/**
 * Saves a file whose contents exist nowhere else (a finished run's results that their own place
 * refused) into the first of `places` that takes it. A place that is full, missing or read-only is
 * skipped, so the caller lists several on different filesystems. The file is `name`, or `stem-2.ext`,
 * `stem-3.ext`… when that exists: the name is claimed with O_EXCL before `write` runs, so the file
 * never replaces anything, not even one created meanwhile. `write` writes the whole file at the path
 * it is given (through `writeFileAtomic`, which may replace the empty claimed file); when it throws,
 * the claimed name is removed again (and a directory created for it) and the next place is tried.
 */
export async function keepInFirstWritable(places: readonly KeepPlace[], name: string, write: (file: string) => Promise<void>): Promise<KeptFile> {
  const failures: string[] = [];
  const seen = new Set<string>();
  for (const place of places) {
    const dir = path.resolve(typeof place === 'string' ? place : place.dir);
    if (seen.has(dir)) continue;
    seen.add(dir);
    let claimed: string | null = null;
    let createdFrom: string | undefined;
    try {
      if (typeof place !== 'string') createdFrom = await fsp.mkdir(dir, { recursive: true });
      claimed = await claimName(dir, name);
      await write(claimed);
      return { path: claimed, failures };
    } catch (err) {
      if (claimed !== null) await fsp.rm(claimed, { force: true }).catch(() => undefined);
      await removeCreatedDirs(dir, createdFrom);
      failures.push(`${dir}: ${(err as Error).message}`);
    }
  }
  return { path: null, failures };
}

/**
 * `keepInFirstWritable` over `first` (the places nearest to where the file was asked for), then the
 * current directory and the temporary directory: several filesystems, most likely one with room.
 * Those that do not exist are skipped. Prints every place that refused; returns where the file went,
 * or null.
 */
export async function keepInFirstDirectory(first: readonly string[], name: string, write: (file: string) => Promise<void>): Promise<string | null> {
  const dirs = [...first, ...currentDirectory(), os.tmpdir()].filter((d) => statOrNull(d)?.isDirectory());
  const kept = await keepInFirstWritable(dirs, name, write);
  for (const f of kept.failures) process.stderr.write(`  not saved in ${f}\n`);
  return kept.path;
}

/**
 * The folder of `file`, the output asked for, as the first place to keep it instead (under another
 * name: space may have been freed, or the asked name may be a directory now). None when `file` is
 * not a file to replace: the folder of a device, FIFO or descriptor (`--output /dev/full`,
 * `/dev/stdout`) is no place for a new regular file (/dev is a RAM filesystem of device nodes).
 */
export function askedFileFolder(file: string): string[] {
  let kind: OutputTarget['kind'];
  try {
    kind = resolveOutputTarget(file).kind;
  } catch {
    return []; // a loop of links: its folder is no better a place
  }
  return kind === 'replace' ? [path.dirname(path.resolve(file))] : [];
}

/** The current directory, or none when it has been removed (process.cwd() throws ENOENT then). */
function currentDirectory(): string[] {
  try {
    return [process.cwd()];
  } catch {
    return [];
  }
}

/** Marks the results JSON printed to stderr when no file could take it, so it can be cut out again. */
export const RESULTS_JSON_BEGIN = '----- BEGIN kvbench results JSON (no file could be written) -----';
export const RESULTS_JSON_END = '----- END kvbench results JSON -----';

/**
 * The last resort for results no file could take: the JSON on stderr, between the marker lines, so
 * that a terminal's scrollback or a redirected log still holds them. Says so first.
 */
export function printResultsJson(json: string): void {
  const text = json.endsWith('\n') ? json : `${json}\n`;
  process.stderr.write(`no file could take the results: the results JSON follows on stderr, between these lines\n${RESULTS_JSON_BEGIN}\n${text}${RESULTS_JSON_END}\n`);
}

/** Now as `20261124T132614Z`: the time in a kept file's name, sortable and free of ':'. */
export function fileNameTime(): string {
  return new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
}

/** Creates an empty file named `name` (or the first free `stem-N.ext`) in `dir`; returns its path. */
async function claimName(dir: string, name: string): Promise<string> {
  const ext = path.extname(name);
  const stem = name.slice(0, name.length - ext.length);
  for (let n = 1; n <= MAX_NAMES_PER_DIR; n++) {
    const file = path.join(dir, n === 1 ? name : `${stem}-${n}${ext}`);
    try {
      await (await fsp.open(file, 'wx', 0o644)).close();
      return file;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  throw new Error(`${name} and ${MAX_NAMES_PER_DIR - 1} numbered variants of it exist already`);
}
