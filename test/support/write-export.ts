// An export model written to a file as kvbench writes its exports (exportChunks through
// writeChunksAtomic): the tests' way to a file from a model they built; kvbench itself plans its
// exports from the store (plan-export.ts).
import { exportChunks, type ExportContent, type ExportFormat, type ExportModel } from '../../src-main/export/export-trials.ts';
import { writeChunksAtomic, type FileChunks } from '../../src-main/util/write-file-atomic.ts';

export async function writeExport(model: ExportModel, format: ExportFormat, file: string, content: ExportContent = 'trials'): Promise<void> {
  await writeChunksAtomic(file, exportChunks(model, format, content));
}

/** The pieces of a file made into one buffer (kvbench itself never holds an export whole: it writes each piece as it is made). */
export async function bytesOf(chunks: FileChunks): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of chunks) parts.push(typeof c === 'string' ? Buffer.from(c) : Buffer.from(c.buffer, c.byteOffset, c.byteLength));
  return Buffer.concat(parts);
}
