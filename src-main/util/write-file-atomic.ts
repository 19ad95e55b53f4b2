import { printable } from '../../src-shared/domain/label-text.ts';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { leftByDeadProcesses } from './dead-process-leftovers.ts';
import { resolveRealPath } from './real-path.ts';
import { statOrNull } from './stat-or-null.ts';
import { writeFailureWords } from './write-failure-words.ts';

/** Why a file cannot be written, by errno, in words naming the user's file or its folder (both given escaped: printable). */
const CAUSES: Readonly<Record<string, (file: string, dir: string) => string>> = {
  ENOENT: (_file, dir) => `its folder ${dir} does not exist`,
  ENOTDIR: (_file, dir) => `${dir} is not a folder`,
  EISDIR: (file) => `${file} is a directory`,
  ENOSPC: (_file, dir) => `the disk holding ${dir} is full`,
  EDQUOT: (_file, dir) => `the disk quota for ${dir} is used up`,
  EROFS: (_file, dir) => `${dir} is on a read-only filesystem`,
  EACCES: (_file, dir) => `permission denied: ${dir} is not writable`,
  EPERM: (_file, dir) => `permission denied: ${dir} is not writable`,
};

/**
 * A write of `path` that failed. The message is the cause, with the folder or file it concerns (for a
 * link, the folder of the file it leads to) and the errno code, never the temporary file written
 * first; callers say `could not write PATH: …`.
 */
export class FileWriteError extends Error {
  readonly code: string | undefined;
  readonly path: string;

  /**
   * `written`: the path the failed call used (a temporary, a descriptor link), named `file` in the
   * message. `folder`: the folder the write needed, whose problem the message names; null for a
   * write straight into a pipe or device, whose folder plays no part.
   */
  constructor(file: string, cause: unknown, written: string, folder: string | null = path.dirname(path.resolve(file))) {
    const e = cause as NodeJS.ErrnoException;
    // Into a pipe or device (folder null): said as a failed stdout is said.
    const said = e.code === undefined ? undefined : folder === null ? writeFailureWords(e.code) : CAUSES[e.code]?.(printable(file), printable(folder));
    const message = said ? `${said} (${e.code})` : printable(String(e.message ?? cause).replaceAll(written, file));
    super(message, { cause });
    this.name = 'FileWriteError';
    this.code = e.code;
    this.path = file;
  }
}

/** Symbolic links followed before a path counts as a loop, as the kernel's own limit (ELOOP). */
const MAX_LINK_HOPS = 40;

/** A process's descriptor table (`/proc/self/fd`, where `/dev/stdout` and `/dev/fd/N` lead). */
const DESCRIPTOR_DIRECTORY = /^\/proc\/([^/]+)\/(?:task\/[^/]+\/)?fd$/;

/**
 * Where a write of `file` goes. `replace`: a regular file, or none yet, at `path` (links resolved),
 * which a write replaces atomically. `direct`: something that is not a file to replace (a terminal, a
 * pipe, a FIFO, a device such as /dev/null, another descriptor's file), which a write goes into as `>>`
 * would, never removing or renaming it. `stdout`, `stderr`: this process's own (/dev/stdout,
 * /proc/self/fd/2), written through its stream, after what it printed there: also a socket, which
 * cannot be opened by path, and a file the shell opened, whose position the stream shares.
 */
export interface OutputTarget {
  kind: 'replace' | 'direct' | 'stdout' | 'stderr';
  path: string;
}

/**
 * Follows `file`'s symbolic links (those of its folders and its own) to what a write must reach: a
 * link to a results folder or file is written through, never replaced by a file of its own. A link
 * that leads nowhere yet gives the file it names, as a shell's `>` creates it. A descriptor link
 * (/dev/stdout → /proc/self/fd/1) stops the walk: what it points at is open already, not a path.
 * Throws ELOOP for a chain of links that never ends.
 */
export function resolveOutputTarget(file: string): OutputTarget {
  let next = path.resolve(file);
  for (let hops = 0; hops <= MAX_LINK_HOPS; hops++) {
    const dir = resolveRealPath(path.dirname(next));
    const at = path.join(dir, path.basename(next));
    const st = lstatOrNull(at);
    if (st === null || st.isFile() || st.isDirectory()) return { kind: 'replace', path: at };
    const descriptors = DESCRIPTOR_DIRECTORY.exec(dir);
    if (descriptors !== null) return { kind: descriptorKind(descriptors[1], path.basename(at)), path: at };
    if (!st.isSymbolicLink()) return { kind: 'direct', path: at };
    next = path.resolve(dir, fs.readlinkSync(at));
  }
  throw Object.assign(new Error(`too many levels of symbolic links: ${file}`), { code: 'ELOOP' });
}

/** Descriptor `fd` of process `pid` (`self` resolved already) as a write target. */
function descriptorKind(pid: string, fd: string): OutputTarget['kind'] {
  if (pid !== String(process.pid)) return 'direct';
  return fd === '1' ? 'stdout' : fd === '2' ? 'stderr' : 'direct';
}

function lstatOrNull(file: string): fs.Stats | null {
  try {
    return fs.lstatSync(file);
  } catch {
    return null;
  }
}

/**
 * Why `file` cannot be written, checked before long work that ends in writing it (a missing folder,
 * a directory in its place, a read-only or forbidden folder), or null. A full disk shows only when
 * the write fails. Links are followed as the write follows them; a pipe, terminal or device (say
 * /dev/stdout) must itself be writable, its folder need not be.
 */
export function outputFileProblem(file: string): string | null {
  let target: OutputTarget;
  try {
    target = resolveOutputTarget(file);
  } catch {
    return `${printable(file)} is a loop of symbolic links (ELOOP)`;
  }
  const dir = path.dirname(target.path);
  const cause = (code: string): string => CAUSES[code](printable(file), printable(dir));
  if (target.kind !== 'replace') {
    try {
      fs.accessSync(target.path, fs.constants.W_OK);
      return null;
    } catch (err) {
      return `permission denied: ${printable(file)} is not writable (${(err as NodeJS.ErrnoException).code ?? 'EACCES'})`;
    }
  }
  if (statOrNull(target.path)?.isDirectory()) return cause('EISDIR');
  // "out/" names a folder (one not made yet): writing would make a file of that name instead.
  if (/[\\/]$/.test(file)) return `it ends in ${file.at(-1)}, so it names a folder, not a file`;
  const folder = statOrNull(dir);
  if (folder === null) return cause('ENOENT');
  if (!folder.isDirectory()) return cause('ENOTDIR');
  try {
    fs.accessSync(dir, fs.constants.W_OK | fs.constants.X_OK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'EACCES';
    return (CAUSES[code] ?? CAUSES.EACCES)(printable(file), printable(dir));
  }
  return null;
}

/**
 * Writes `data` to `file` through a temporary file beside it, synced, then renamed over: a reader never
 * sees half a file, and a failed write never replaces a good one. The temporary name is unique per
 * process and call, so concurrent writes of one file cannot trample each other's temporaries.
 * A symbolic link is followed: the file it leads to is replaced (the temporary beside that), the link
 * stays. What is not a regular file (/dev/stdout, a pipe, a FIFO, /dev/null) is written into as it is,
 * appending, and never replaced: `--out /dev/stdout | gzip` works, and a system link survives.
 * (A file that must never replace another's claims its name first: util/keep-file.ts.)
 * Failures are FileWriteErrors, which name `file` (or its folder), not the temporary.
 */
export async function writeFileAtomic(file: string, data: string | Uint8Array, opts: { mode?: number } = {}): Promise<void> {
  await writeChunksAtomic(file, [data], opts);
}

/** What writeChunksAtomic writes: pieces of a file, made (and read from the database) as they are asked for. */
export type FileChunks = Iterable<string | Uint8Array> | AsyncIterable<string | Uint8Array>;

/**
 * writeFileAtomic for a file made piece by piece (a large export): each chunk is written as it comes,
 * so the whole file is never held, with the same guarantees: the temporary beside the file is renamed
 * over it only once every chunk is written and synced, and a failure (a full disk, or `chunks`
 * throwing) removes the temporary and leaves the file as it was. What `chunks` throws is thrown as
 * it is (reading refused, not writing); the file system's failures are FileWriteErrors.
 */
export async function writeChunksAtomic(file: string, chunks: FileChunks, opts: { mode?: number } = {}): Promise<void> {
  let target: OutputTarget;
  try {
    target = resolveOutputTarget(file);
  } catch (err) {
    throw new FileWriteError(file, err, file);
  }
  if (target.kind !== 'replace') return writeInto(file, target, chunks);
  const made = atomicFileAt(file, target.path);
  temporaries.add(made.tmp);
  try {
    await writeTemporary(made, chunks, opts);
    await commitAtomicFile(made);
  } finally {
    temporaries.delete(made.tmp);
  }
}

/**
 * A file made whole beside where it goes: its pieces written into `tmp` (writeTemporary, which may
 * run on another thread than the rest), then renamed over `target` (commitAtomicFile), or `tmp`
 * removed (abandonAtomicFile). `file` is the name the user gave, which failures name.
 */
export interface AtomicFile {
  file: string;
  /** Where the file goes, links followed (resolveOutputTarget). */
  target: string;
  tmp: string;
}

function atomicFileAt(file: string, target: string): AtomicFile {
  return { file, target, tmp: path.join(path.dirname(target), `${temporaryPrefix(target)}${process.pid}.${randomBytes(6).toString('hex')}.tmp`) };
}

/**
 * `file` to be replaced atomically (writeChunksAtomic's way, in three steps), or a FileWriteError
 * where it cannot be: a loop of links, or something that is not a regular file to replace (a pipe,
 * a device), which the app never saves into.
 */
export function atomicFileOf(file: string): AtomicFile {
  let target: OutputTarget;
  try {
    target = resolveOutputTarget(file);
  } catch (err) {
    throw new FileWriteError(file, err, file);
  }
  if (target.kind !== 'replace') throw new FileWriteError(file, new Error(`it is not a file kvbench can replace (a pipe, a device or a terminal)`), file);
  return atomicFileAt(file, target.path);
}

/**
 * Writes `chunks` into `made.tmp` (created, never an existing file), synced: its size in bytes. A
 * failure (a full disk, or `chunks` throwing) removes the temporary and is thrown: what `chunks`
 * throws as it is (reading refused, not writing), the file system's failures as FileWriteErrors.
 */
export async function writeTemporary(made: AtomicFile, chunks: FileChunks, opts: { mode?: number } = {}): Promise<number> {
  const dir = path.dirname(made.target);
  let bytes = 0;
  try {
    const fh = await writing(made.file, made.tmp, dir, () => fsp.open(made.tmp, 'wx', opts.mode ?? 0o644));
    try {
      for await (const chunk of chunks) {
        await writing(made.file, made.tmp, dir, () => fh.writeFile(chunk));
        bytes += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.byteLength;
      }
      await writing(made.file, made.tmp, dir, () => fh.sync());
    } finally {
      await fh.close();
    }
    return bytes;
  } catch (err) {
    await abandonAtomicFile(made);
    throw err;
  }
}

/** Renames the written temporary over the target (a FileWriteError naming the file where it fails, the temporary then removed). */
export async function commitAtomicFile(made: AtomicFile): Promise<void> {
  try {
    await writing(made.file, made.tmp, path.dirname(made.target), () => fsp.rename(made.tmp, made.target));
  } catch (err) {
    await abandonAtomicFile(made);
    throw err;
  }
}

/** Removes the temporary, if any (a write stopped part way, or one that failed). */
export async function abandonAtomicFile(made: AtomicFile): Promise<void> {
  await fsp.rm(made.tmp, { force: true });
}

/** The temporary files writeChunksAtomic is writing now (removeTemporariesNow). */
const temporaries = new Set<string>();

/** How the temporaries of `file` (the file a write replaces) begin: `.NAME.`, then the writer's pid. */
const temporaryPrefix = (file: string): string => `.${path.basename(file)}.`;

/**
 * Removes the temporary files of the writes under way, at once (synchronously): for a command
 * stopped by a signal, which exits right after, leaving the files the writes would replace as they
 * were. Returns those removed.
 */
export function removeTemporariesNow(): string[] {
  const removed: string[] = [];
  for (const tmp of temporaries) {
    try {
      fs.rmSync(tmp, { force: true });
      removed.push(tmp);
    } catch {
      // its folder gone or not writable: nothing more can be done on the way out
    }
  }
  temporaries.clear();
  return removed;
}

/** How long a dead writer's temporary must have been left unchanged before a later write of its file removes it: a writer in another PID namespace (a container sharing the folder) may look dead here. */
export const STALE_TEMPORARY_MS = 10 * 60_000;

/**
 * The temporaries that earlier writes of `file` left beside it (a writer killed with SIGKILL, or a
 * power loss: nothing could remove them), `.NAME.PID.HEX.tmp` of a process that no longer runs: those
 * unchanged for STALE_TEMPORARY_MS are removed (`removed`), the younger ones only named (`left`).
 */
export function sweepLeftTemporaries(file: string, nowMs = Date.now()): { removed: string[]; left: string[] } {
  const out = { removed: [] as string[], left: [] as string[] };
  for (const tmp of leftByDeadProcesses(path.dirname(file), temporaryPrefix(file), /^(\d+)\.[0-9a-f]{12}\.tmp$/)) {
    const st = statOrNull(tmp);
    if (st === null || !st.isFile()) continue;
    if (nowMs - st.mtimeMs < STALE_TEMPORARY_MS) {
      out.left.push(tmp);
      continue;
    }
    try {
      fs.rmSync(tmp, { force: true });
      out.removed.push(tmp);
    } catch {
      out.left.push(tmp);
    }
  }
  return out;
}

/** `op`, its failure a FileWriteError naming `file` (a failure of the temporary `written` is the file's). */
async function writing<T>(file: string, written: string, folder: string | null, op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (err) {
    throw new FileWriteError(file, err, written, folder);
  }
}

/**
 * Writes into a pipe, terminal, FIFO or device, or an open descriptor's file, without creating,
 * truncating or syncing anything (a pipe cannot be synced): appending, so a shell's `>>` behind
 * /dev/stdout keeps what came before, and output the process printed first stays ahead of `data`.
 */
async function writeInto(file: string, target: OutputTarget, chunks: FileChunks): Promise<void> {
  if (target.kind === 'stdout' || target.kind === 'stderr') {
    const stream = target.kind === 'stdout' ? process.stdout : process.stderr;
    for await (const chunk of chunks) {
      await writing(file, target.path, null, () => new Promise<void>((resolve, reject) => stream.write(chunk, (err) => (err ? reject(err) : resolve()))));
    }
    return;
  }
  const fh = await writing(file, target.path, null, () => fsp.open(target.path, fs.constants.O_WRONLY | fs.constants.O_APPEND));
  try {
    for await (const chunk of chunks) await writing(file, target.path, null, () => fh.writeFile(chunk));
  } finally {
    await fh.close();
  }
}
