// An export model written to a file as kvbench writes its exports (exportChunks through
// writeChunksAtomic): the tests' way to a file from a model they built; kvbench itself plans its
// exports from the store (plan-export.ts).
import { exportChunks, type ExportContent, type ExportFormat, type ExportModel } from '../../src-main/export/export-trials.ts';
import { writeChunksAtomic } from '../../src-main/util/write-file-atomic.ts';

export async function writeExport(model: ExportModel, format: ExportFormat, file: string, content: ExportContent = 'trials'): Promise<void> {
  await writeChunksAtomic(file, exportChunks(model, format, content));
}
