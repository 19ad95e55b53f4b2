// The plain `kvbench history --limit 0` table loaded every trial of the listing (each a full record
// with its results) to size its columns. It now reads a page of trials at a time, keeping each only
// as its row's cells, and must print what 0.7.0 printed (test/support/history-table-before.ts) on a
// real database of more than one page: flagged and RAM-backed trials, stored labels and reasons with
// characters the table escapes, failed trials without metrics.
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { historyCommand } from '../../../src-main/cli/history-command.ts';
import { openStore } from '../../../src-main/store/open-store.ts';
import { Store } from '../../../src-main/store/store.ts';
import { historyTableBefore } from '../../support/history-table-before.ts';
import { fakeHardware, kvbenchResults, removeTempDirs, tempDir } from '../store/fixtures.ts';
import { addSuiteTrials, seedVariedHistory } from '../store/seed-store.ts';
import { importDrive } from '../export/drive-imports.ts';
import { runInProcess } from './in-process.ts';

afterEach(() => {
  vi.restoreAllMocks();
  removeTempDirs();
});

describe('kvbench history --limit 0 (the table)', () => {
  it('reads its trials a page at a time, never all at once, and prints the table 0.7.0 printed', async () => {
    const dir = tempDir();
    const db = path.join(dir, 'kvbench.db');
    const s = openStore(db);
    try {
      // 1,100 trials: three pages of 500.
      seedVariedHistory(s, 1100);
      await importDrive(s, dir, 'A-ram', [300, 310].map((tokPerS) => ({ tokPerS, ramBacked: true, ramBacking: 'loop0 → /dev/shm/d.img on tmpfs' })));
      addSuiteTrials(s, fakeHardware({ systemId: 'sys-fedcba9876543210', hostname: 'lab-wide-hostname-of-a-long-name' }), 3, (i, options) =>
        i === 1 ? { failed: 'ENGINE_CRASHED: "x", killed\u009b[2J and a reason far longer than the sixty characters the column shows' } : { results: kvbenchResults({ tokPerS: 1000 + i, durationS: Number(options.duration) }) as unknown as Record<string, unknown> },
      );
      // A label stored before labels were checked, with a bidi override the table escapes.
      s.db.prepare('UPDATE suites SET label = ? WHERE id = (SELECT MIN(id) FROM suites)').run('rev\u202eA, the long label of a suite');
    } finally {
      s.close();
    }
    const r = openStore(db, { readonly: true });
    const all = r.listTrials({});
    const first7 = r.listTrials({ limit: 7 });
    r.close();
    expect(all.length).toBeGreaterThan(1000);

    const listTrials = vi.spyOn(Store.prototype, 'listTrials');
    const trialPages = vi.spyOn(Store.prototype, 'trialPages');
    const whole = await runInProcess(() => historyCommand(['--db', db, '--limit', '0']));
    expect(whole.code, whole.stderr).toBe(0);
    expect(whole.stdout).toBe(historyTableBefore(all));
    expect(listTrials).not.toHaveBeenCalled();
    expect(trialPages).toHaveBeenCalledTimes(1);
    expect(whole.stdout).toContain('rev\\u{202e}A');
    expect(whole.stdout).toContain('RAM-backed cache directory: loop0');

    const some = await runInProcess(() => historyCommand(['--db', db, '--limit', '7']));
    expect(some.stdout).toBe(historyTableBefore(first7));
    const none = await runInProcess(() => historyCommand(['--db', db, '--limit', '0', '--scenario', 'gpu-only']));
    expect(none.stdout).toBe('no trials match\n');
  });
});
