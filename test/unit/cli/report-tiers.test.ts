// `kvbench report`'s tier comparison on a real database of imported runs: which rows get an
// efficiency, and what the notes say about those that do not.
import { afterEach, describe, expect, it } from 'vitest';
import { reportCommand } from '../../../src-main/cli/report-command.ts';
import type { TierComparison } from '../../../src-main/export/report-model.ts';
import { openStore } from '../../../src-main/store/open-store.ts';
import { removeTempDirs, tempDir } from '../store/fixtures.ts';
import { dbIn, importDrive } from '../export/drive-imports.ts';
import { runInProcess } from './in-process.ts';

afterEach(removeTempDirs);

async function reportOf(dir: string, ...args: string[]): Promise<{ text: string; tiers: TierComparison }> {
  const text = await runInProcess(() => reportCommand([...args, '--db', dbIn(dir)]));
  const json = await runInProcess(() => reportCommand([...args, '--json', '--db', dbIn(dir)]));
  expect(text.code, text.stderr).toBe(0);
  return { text: text.stdout, tiers: (JSON.parse(json.stdout) as { tiers: TierComparison }).tiers };
}

describe('kvbench report: tier comparison', () => {
  it('gives a row whose storage reads the page cache served no read efficiency, and says why instead of blaming the ceiling', async () => {
    const dir = tempDir();
    const store = openStore(dbIn(dir));
    let suite: number;
    try {
      // Buffered runs whose device read 0 % of what the storage tier read: 1.14 GB/s against a 1 GB/s datasheet.
      const ids = await importDrive(store, dir, 'B-buffered', [1, 2, 3].map((i) => ({ tokPerS: 600 + i, readBytesPerS: 1.14e9 + i, readCoverage: 0, options: { directIo: false } })));
      suite = store.getTrial(ids[0])!.suiteId;
    } finally {
      store.close();
    }
    const { text, tiers } = await reportOf(dir, '--suite', String(suite), '--stated-read-gbps', '1', '--stated-write-gbps', '1');
    expect(tiers.rows).toHaveLength(1);
    expect(tiers.rows[0].storageReadEfficiency).toBeNull();
    // The write efficiency stands: it is the reads the page cache served.
    expect(tiers.rows[0].storageWriteEfficiency).not.toBeNull();
    expect(tiers.notes).toContain('1 row(s): the page cache served storage reads (storage-only: 3 of 3 trial(s)): their read numbers describe RAM, not the drive, so no read efficiency there');
    expect(tiers.notes.join('\n')).not.toMatch(/ceiling is too low/);
    expect(text).toMatch(/^storage-only .* 1\.14 GB\/s\s+—\s+\S+%$/m);
  });
});
