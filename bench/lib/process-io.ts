// The block-layer bytes a measured tool's own process tree moved, so that a CPU-per-byte figure is
// divided by the tool's I/O and not by everything the shared device moved meanwhile (other sessions
// on this machine put 0.1–6.6 GB on vda inside one measured run).
//
// How: like the CPU (measure.ts takes cutime + cstime of this process's reaped descendants), from
// this process's own counters. When a parent reaps a child, the kernel adds the child's /proc/<pid>/io
// counters, its reaped descendants' included, to the parent's (wait_task_zombie), so the kvbench CLI
// carries its engine's bytes and fio its forked jobs' to this process once each is reaped; a live
// sum over /proc/<pid>/io of the tree would lose every process that exits before the last sample.
// /proc/self/io also holds this process's own threads' bytes; /proc/self/task/<tid>/io gives each
// live thread's alone, and the difference is the reaped descendants' (and any exited threads').
//
// What the counters count (kernel 6.18, ext4 on vda, measured with dd and fio, 64 MiB each):
// - O_DIRECT writes and reads: write_bytes / read_bytes = the bytes written / read (64 MiB → 67108864),
//   charged when the bio is submitted. fio's forked jobs and its --thread jobs alike.
// - buffered writes: write_bytes is charged when the page is dirtied, to the writer, not to the
//   kworker that writes it back later (a write without any sync showed its 64 MiB at once);
//   truncating or unlinking the dirty pages before writeback adds them to cancelled_write_bytes
//   (write then rm: write_bytes 64 MiB, cancelled 64 MiB), so bytes that reach the device are
//   write_bytes − cancelled_write_bytes.
// - buffered reads: read_bytes only for what missed the page cache (cold 64 MiB, warm 0), and it
//   includes loading the program itself when its code is not cached (fio after drop_caches: 64.7 MB).
// - not counted: the file system's journal and metadata writes (jbd2's), which the device figure
//   has; with O_DIRECT and fdatasync the two agreed to the byte on 256 MiB (no other load).

import fs from 'node:fs';
import path from 'node:path';

/** Block-layer counters of /proc/<pid>/io, in bytes. */
export interface ProcessIo {
  readBytes: number;
  writeBytes: number;
  /** Bytes charged to writeBytes whose dirty pages were truncated before writeback. */
  cancelledWriteBytes: number;
}

const field = (text: string, name: string): number | null => {
  const m = new RegExp(`^${name}:\\s*(\\d+)\\s*$`, 'm').exec(text);
  return m === null ? null : Number(m[1]);
};

/** The block-layer counters of a /proc/<pid>/io text; null when any is missing. */
export function parseProcessIo(text: string): ProcessIo | null {
  const readBytes = field(text, 'read_bytes');
  const writeBytes = field(text, 'write_bytes');
  const cancelledWriteBytes = field(text, 'cancelled_write_bytes');
  if (readBytes === null || writeBytes === null || cancelledWriteBytes === null) return null;
  return { readBytes, writeBytes, cancelledWriteBytes };
}

/**
 * Block-layer bytes of this process's reaped descendants (and of its threads that have exited) so
 * far: /proc/self/io less each live thread's own counters.
 */
export function reapedChildrenIo(procRoot = '/proc'): { ok: true; io: ProcessIo } | { ok: false; reason: string } {
  const self = path.join(procRoot, 'self');
  try {
    // Threads first: one that exits between the two reads then moves its bytes into the process's
    // total after it was subtracted, and is not taken for a child's.
    const threads: ProcessIo[] = [];
    for (const tid of fs.readdirSync(path.join(self, 'task'))) {
      let text: string;
      try {
        text = fs.readFileSync(path.join(self, 'task', tid, 'io'), 'utf8');
      } catch {
        continue; // exited since the listing: its bytes are in the process's total now
      }
      const t = parseProcessIo(text);
      if (t === null) return { ok: false, reason: `${self}/task/${tid}/io has no block-layer counters` };
      threads.push(t);
    }
    const whole = parseProcessIo(fs.readFileSync(path.join(self, 'io'), 'utf8'));
    if (whole === null) return { ok: false, reason: `${self}/io has no block-layer counters (kernel without task I/O accounting?)` };
    return { ok: true, io: threads.reduce((acc, t) => ioDelta(t, acc), whole) };
  } catch (err) {
    return { ok: false, reason: `cannot read ${self}/io: ${(err as Error).message}` };
  }
}

/** What moved between two readings. */
export function ioDelta(before: ProcessIo, after: ProcessIo): ProcessIo {
  return {
    readBytes: after.readBytes - before.readBytes,
    writeBytes: after.writeBytes - before.writeBytes,
    cancelledWriteBytes: after.cancelledWriteBytes - before.cancelledWriteBytes,
  };
}

/** Bytes read from or written to storage: reads plus the writes not cancelled before writeback. */
export function storageBytesOf(io: ProcessIo): number {
  return io.readBytes + Math.max(0, io.writeBytes - io.cancelledWriteBytes);
}
