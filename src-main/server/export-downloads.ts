// The exports `kvbench serve` hands to the page as downloads. A worker thread writes each export
// into a private folder (report-jobs.ts); the page is answered with a one-time URL (a random token
// in the path, never the server's own token), and the HTTP server streams the file from disk
// (http-server.ts), so the export's bytes are never held in the server's memory, nor sent as base64
// inside a JSON reply. A file is removed once downloaded, once unclaimed for DOWNLOAD_KEPT_MS, and
// with the folder when the server closes; folders a killed server left are removed by the next one.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { leftByDeadProcesses } from '../util/dead-process-leftovers.ts';

/** How long a written export waits to be downloaded (the page asks at once; a closed tab never does). */
export const DOWNLOAD_KEPT_MS = 10 * 60_000;

/** The start of a download folder's name; the pid that made it follows. */
const FOLDER_STEM = 'kvbench-exports-';

/** A written export the page may download once. */
export interface OfferedDownload {
  file: string;
  fileName: string;
  mimeType: string;
  bytes: number;
}

export interface ExportDownloadsOptions {
  /** Where the private folder is made (default: the system's temporary folder). */
  tmpRoot?: string;
  keptMs?: number;
}

/** One server's downloads: a private folder (mode 0700) and the tokens of the files in it. */
export class ExportDownloads {
  private readonly offered = new Map<string, { download: OfferedDownload; timer: NodeJS.Timeout }>();
  private folder: string | null = null;
  private closed = false;
  private readonly o: ExportDownloadsOptions;

  constructor(o: ExportDownloadsOptions = {}) {
    this.o = o;
  }

  /** A new path in the private folder for an export of `extension` (made on first use). */
  async newFile(extension: string): Promise<string> {
    if (this.closed) throw new Error('the server is closing');
    if (this.folder === null) {
      const root = this.o.tmpRoot ?? os.tmpdir();
      removeDeadServersFolders(root);
      this.folder = await fsp.mkdtemp(path.join(root, `${FOLDER_STEM}${process.pid}-`));
    }
    return path.join(this.folder, `${randomBytes(9).toString('hex')}.${extension}`);
  }

  /** Offers a written file for one download: the token its URL carries. Unclaimed, it is removed after keptMs. */
  offer(download: OfferedDownload): string {
    const token = randomBytes(24).toString('hex');
    const timer = setTimeout(() => {
      this.offered.delete(token);
      void fsp.rm(download.file, { force: true });
    }, this.o.keptMs ?? DOWNLOAD_KEPT_MS);
    timer.unref();
    this.offered.set(token, { download, timer });
    return token;
  }

  /** The download of `token`, once: later calls (and unknown tokens) get null. The caller removes the file once sent (done). */
  take(token: string): OfferedDownload | null {
    const hit = this.offered.get(token);
    if (hit === undefined) return null;
    this.offered.delete(token);
    clearTimeout(hit.timer);
    return hit.download;
  }

  /** Removes a taken download's file (sent, or the connection gone). */
  async done(download: OfferedDownload): Promise<void> {
    await fsp.rm(download.file, { force: true });
  }

  /** Every file offered or being written, with the folder; no new file after. */
  async close(): Promise<void> {
    this.closed = true;
    for (const { timer } of this.offered.values()) clearTimeout(timer);
    this.offered.clear();
    if (this.folder !== null) await fsp.rm(this.folder, { recursive: true, force: true });
  }
}

/** Removes the download folders in `root` of servers no longer running (killed before their close). */
function removeDeadServersFolders(root: string): void {
  for (const folder of leftByDeadProcesses(root, FOLDER_STEM, /^(\d+)-/)) {
    try {
      // Only a folder of our own making: owned by this user (a shared /tmp holds other users' names too).
      const st = fs.lstatSync(folder);
      if (!st.isDirectory() || st.uid !== process.getuid?.()) continue;
    } catch {
      continue;
    }
    fs.rmSync(folder, { recursive: true, force: true });
  }
}
