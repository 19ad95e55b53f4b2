// Whether a directory's filesystem accepts O_DIRECT, found by trying it: there is no reliable way
// to ask (tmpfs on older kernels, FUSE and network filesystems refuse it at open or at the first
// I/O, with EINVAL).

import { randomBytes } from 'node:crypto';
import { constants as fsConstants, promises as fsp } from 'node:fs';
import path from 'node:path';
import { allocatePageAlignedShared } from './shared-memory.ts';

export interface DirectIoProbe {
  supported: boolean;
  reason: string | null;
  /** Smallest O_DIRECT read size that works (512…4096); 0 when direct I/O is unsupported. */
  logicalBlockBytes: number;
}

export const DIRECT_IO_ALIGNMENT_BYTES = 4096;
const REFUSAL_CODES = new Set(['EINVAL', 'EOPNOTSUPP', 'ENOTSUP']);

function codeOf(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return typeof code === 'string' ? code : 'unknown error';
}

function isRefusal(err: unknown): boolean {
  return REFUSAL_CODES.has(codeOf(err));
}

/**
 * Tries an O_DIRECT open, an aligned 4 KiB write and read-back in a temporary file inside `dir`.
 * Errors that say nothing about direct I/O (the directory is missing or not writable, the disk is
 * full) are thrown rather than reported as "unsupported".
 */
export async function probeDirectIo(dir: string): Promise<DirectIoProbe> {
  const oDirect = fsConstants.O_DIRECT;
  if (typeof oDirect !== 'number' || oDirect === 0) {
    return { supported: false, reason: `O_DIRECT is not available on this platform (${process.platform})`, logicalBlockBytes: 0 };
  }
  const probePath = path.join(dir, `.kvbench-direct-io-probe-${process.pid}-${randomBytes(6).toString('hex')}.tmp`);
  // A shared WebAssembly memory is page-aligned, as O_DIRECT buffers must be.
  const aligned = allocatePageAlignedShared(1);
  const written = Buffer.from(aligned, 0, DIRECT_IO_ALIGNMENT_BYTES);
  const readBack = Buffer.from(aligned, DIRECT_IO_ALIGNMENT_BYTES, DIRECT_IO_ALIGNMENT_BYTES);
  for (let i = 0; i < written.length; i++) written[i] = (i * 131 + 7) & 0xff;

  let fh: fsp.FileHandle | undefined;
  try {
    try {
      fh = await fsp.open(
        probePath,
        fsConstants.O_RDWR | fsConstants.O_CREAT | fsConstants.O_EXCL | oDirect,
        0o600,
      );
    } catch (err) {
      if (isRefusal(err)) {
        return { supported: false, reason: `open with O_DIRECT failed on this filesystem (${codeOf(err)})`, logicalBlockBytes: 0 };
      }
      throw err;
    }
    try {
      const { bytesWritten } = await fh.write(written, 0, DIRECT_IO_ALIGNMENT_BYTES, 0);
      if (bytesWritten !== DIRECT_IO_ALIGNMENT_BYTES) {
        return { supported: false, reason: `aligned 4 KiB O_DIRECT write was short (${bytesWritten} bytes)`, logicalBlockBytes: 0 };
      }
    } catch (err) {
      if (isRefusal(err)) {
        return { supported: false, reason: `aligned 4 KiB O_DIRECT write failed on this filesystem (${codeOf(err)})`, logicalBlockBytes: 0 };
      }
      throw err;
    }
    try {
      const { bytesRead } = await fh.read(readBack, 0, DIRECT_IO_ALIGNMENT_BYTES, 0);
      if (bytesRead !== DIRECT_IO_ALIGNMENT_BYTES || !readBack.equals(written)) {
        return { supported: false, reason: 'aligned 4 KiB O_DIRECT read returned different bytes than were written', logicalBlockBytes: 0 };
      }
    } catch (err) {
      if (isRefusal(err)) {
        return { supported: false, reason: `aligned 4 KiB O_DIRECT read failed on this filesystem (${codeOf(err)})`, logicalBlockBytes: 0 };
      }
      throw err;
    }
    // Direct reads smaller than the logical block fail with EINVAL, so the smallest that works is it.
    let logicalBlockBytes = DIRECT_IO_ALIGNMENT_BYTES;
    for (const sizeBytes of [512, 1024, 2048]) {
      try {
        await fh.read(readBack, 0, sizeBytes, 0);
        logicalBlockBytes = sizeBytes;
        break;
      } catch (err) {
        if (!isRefusal(err)) throw err;
      }
    }
    return { supported: true, reason: null, logicalBlockBytes };
  } finally {
    if (fh !== undefined) await fh.close().catch(() => undefined);
    // Some kernels create the file before refusing O_DIRECT, so remove it whatever happened.
    await fsp.unlink(probePath).catch(() => undefined);
  }
}

/** Bytes available to an unprivileged writer on the filesystem holding `dir`. */
export async function freeSpaceBytes(dir: string): Promise<number> {
  const stats = await fsp.statfs(dir);
  return stats.bavail * stats.bsize;
}
