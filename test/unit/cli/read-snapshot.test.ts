// `kvbench report` and `kvbench export` (JSON, XLSX, a report CSV) list the selected trials, then read
// each one's histograms and hardware as separate statements. Another process deleting trials in
// between (the app, another kvbench) gave groups counted from the trials listed but pooled from those
// still there, a false "have no histograms", and `hardware: null`. They now read in one snapshot. On a
// real SQLite file, with a real second connection that deletes half the trials at the first
// histogram read: deterministic, not a race.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { exportCommand } from '../../../src-main/cli/export-command.ts';
import { reportCommand } from '../../../src-main/cli/report-command.ts';
import { openStore } from '../../../src-main/store/open-store.ts';
import { Store } from '../../../src-main/store/store.ts';
import { removeTempDirs, tempDir } from '../store/fixtures.ts';
import { seedVariedHistory } from '../store/seed-store.ts';
import { runInProcess } from './in-process.ts';

afterEach(() => {
  vi.restoreAllMocks();
  removeTempDirs();
});

/** A database of 60 trials and a second connection to it, as another process's would be. */
function seeded(): { dir: string; db: string; writer: Store; half: number[] } {
  const dir = tempDir('kvb-snapshot-');
  const db = path.join(dir, 'kvbench.db');
  const s = openStore(db);
  seedVariedHistory(s, 60);
  const half = s
    .listTrials({ order: 'asc' })
    .filter((t) => t.status !== 'running')
    .map((t) => t.id)
    .filter((_, i) => i % 2 === 0);
  return { dir, db, writer: s, half };
}

/** While `run` runs, the first histogram read by any other connection than `writer` is preceded by `writer` deleting `ids`. */
async function deletingAtFirstHistogramRead<T>(writer: Store, ids: number[], run: () => Promise<T>): Promise<T> {
  const original = Store.prototype.trialHistograms;
  let deleted = false;
  vi.spyOn(Store.prototype, 'trialHistograms').mockImplementation(function (this: Store, id: number) {
    if (!deleted && this !== writer) {
      deleted = true;
      writer.deleteTrials(ids);
    }
    return original.call(this, id);
  });
  try {
    return await run();
  } finally {
    vi.restoreAllMocks();
    expect(deleted).toBe(true);
  }
}

/** An export's times (exported at) as NOW. */
const timeless = (text: string): string => text.replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z/g, (t) => (Math.abs(Date.parse(t) - Date.now()) < 600_000 ? 'NOW' : t));

describe('kvbench report and export read one state of the file', () => {
  it('report --all --json: a delete by another connection after the trials are listed changes nothing of the report', async () => {
    const { db, writer, half } = seeded();
    try {
      const before = await runInProcess(() => reportCommand(['--all', '--json', '--db', db]));
      expect(before.code, before.stderr).toBe(0);
      const during = await deletingAtFirstHistogramRead(writer, half, () => runInProcess(() => reportCommand(['--all', '--json', '--db', db])));
      expect(during.code, during.stderr).toBe(0);
      expect(during.stdout).toBe(before.stdout);
      // The delete happened: the next report is of what is left.
      const after = await runInProcess(() => reportCommand(['--all', '--json', '--db', db]));
      expect(after.stdout).not.toBe(before.stdout);
    } finally {
      writer.close();
    }
  });

  for (const [format, content] of [
    ['json', 'trials'],
    ['csv', 'report'],
  ] as const) {
    it(`export --format ${format} --content ${content}: the same file as before the delete, every trial with its hardware`, async () => {
      const { dir, db, writer, half } = seeded();
      try {
        const out = (name: string): string => path.join(dir, `${name}.${format}`);
        const args = (name: string): string[] => ['--db', db, '--format', format, '--content', content, '--out', out(name)];
        expect((await runInProcess(() => exportCommand(args('before')))).code).toBe(0);
        const during = await deletingAtFirstHistogramRead(writer, half, () => runInProcess(() => exportCommand(args('during'))));
        expect(during.code, during.stderr).toBe(0);
        const text = fs.readFileSync(out('during'), 'utf8');
        expect(timeless(text)).toBe(timeless(fs.readFileSync(out('before'), 'utf8')));
        if (format === 'json') expect((JSON.parse(text) as { trials: { hardware: unknown }[] }).trials.filter((t) => t.hardware === null)).toEqual([]);
      } finally {
        writer.close();
      }
    });
  }
});
