// Exports and `history --json` are made and written a piece at a time (scale review F2, F10): each
// reads only what its file holds, the trials a page at a time where the file is one row per trial,
// and the bytes are those the whole document made at once gave. On a real SQLite file.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { exportCommand } from '../../../src-main/cli/export-command.ts';
import { historyCommand } from '../../../src-main/cli/history-command.ts';
import { csvTable } from '../../../src-main/export/csv.ts';
import { jsonChunks, trialColumns, trialRow, type ExportModel } from '../../../src-main/export/export-trials.ts';
import { bytesOf, writeExport } from '../../support/write-export.ts';
import { buildExportModel } from '../../../src-main/export/export-model.ts';
import { cautionsOf } from '../../../src-main/export/report-model.ts';
import { openStore } from '../../../src-main/store/open-store.ts';
import { Store } from '../../../src-main/store/store.ts';
import { FileWriteError } from '../../../src-main/util/write-file-atomic.ts';
import { jsonArrayTexts, jsonText } from '../../../src-shared/domain/label-text.ts';
import { METRICS } from '../../../src-shared/domain/store-types.ts';
import { KVBENCH_VERSION } from '../../../src-shared/domain/version.ts';
import { fakeHardware, kvbenchResults, removeTempDirs, tempDir } from '../store/fixtures.ts';
import { addSuiteTrials } from '../store/seed-store.ts';
import { runInProcess } from '../cli/in-process.ts';
import { fillUntilFull, mountTmpfsOrSkip, unmountTmpfsMounts } from '../../support/tmpfs.ts';

afterEach(() => {
  vi.restoreAllMocks();
  vi.useRealTimers();
  unmountTmpfsMounts();
  removeTempDirs();
});

/** A database of two suites (7 trials, one failed with a reason of commas, quotes and a C1 control), closed. */
function database(dir: string): string {
  const db = path.join(dir, 'kvbench.db');
  const s = openStore(db);
  try {
    for (const [n, hw] of [[4, fakeHardware({ probe: true })], [3, fakeHardware({ probe: true, systemId: 'sys-fedcba9876543210' })]] as const) {
      addSuiteTrials(s, hw, n, (i, options) =>
        i === 1 ? { failed: 'ENGINE_CRASHED: "x", killed\u009b[2J' } : { results: kvbenchResults({ tokPerS: 1000 + i, durationS: Number(options.duration) }) as unknown as Record<string, unknown> },
      );
    }
  } finally {
    s.close();
  }
  return db;
}

describe('exports made a piece at a time', () => {
  it('a trials CSV reads no latency histogram and builds no report: its bytes are the trials table', async () => {
    const dir = tempDir();
    const db = database(dir);
    const histograms = vi.spyOn(Store.prototype, 'trialHistograms');
    const file = path.join(dir, 'trials.csv');
    const r = await runInProcess(() => exportCommand(['--db', db, '--out', file]));
    expect(r.stderr).toBe(`exported 7 trial(s) to ${file} (csv)\n`);
    expect(r.code).toBe(0);
    expect(histograms).not.toHaveBeenCalled();
    const s = openStore(db, { readonly: true });
    try {
      const trials = s.listTrials({ order: 'asc' });
      expect(fs.readFileSync(file, 'utf8')).toBe(csvTable(trialColumns(), trials.map((t) => trialRow(t, s.trialHardware(t.id)))));
    } finally {
      s.close();
    }
  });

  it('Store.trialPages: the listing of listTrials, a page at a time, whatever the page size', () => {
    const dir = tempDir();
    const s = openStore(database(dir), { readonly: true });
    try {
      for (const order of ['asc', 'desc'] as const) {
        const all = s.listTrials({ order });
        for (const size of [1, 2, 3, 7, 500]) {
          const pages = [...s.trialPages({ order }, size)];
          expect(pages.every((p) => p.length <= size && p.length > 0)).toBe(true);
          expect(pages.flat()).toEqual(all);
        }
      }
      expect([...s.trialPages({ systemIds: ['sys-fedcba9876543210'], order: 'asc' }, 2)].flat().map((t) => t.id)).toEqual(s.listTrials({ systemIds: ['sys-fedcba9876543210'], order: 'asc' }).map((t) => t.id));
    } finally {
      s.close();
    }
  });

  it('Store.trialHardwareOf: each trial its own snapshot, a snapshot parsed once for all its trials', () => {
    const dir = tempDir();
    const s = openStore(database(dir), { readonly: true });
    try {
      const ids = s.listTrials().map((t) => t.id);
      const shared = s.trialHardwareOf(ids);
      for (const id of ids) expect(shared.get(id)).toEqual(s.trialHardware(id));
      expect(new Set(shared.values()).size).toBe(2);
    } finally {
      s.close();
    }
  });

  it('JSON: the bytes of the whole document made at once, its trials written one at a time', async () => {
    vi.useFakeTimers({ now: new Date('2026-11-25T08:00:00Z'), toFake: ['Date'] });
    const dir = tempDir();
    const s = openStore(database(dir), { readonly: true });
    try {
      for (const suiteIds of [undefined, [1], [99]]) {
        let model: ExportModel;
        try {
          model = buildExportModel(s, suiteIds ? { suiteIds } : {}, { includeIncomplete: false, stated: null, whereToLook: 'nowhere' });
        } catch {
          continue; // suite 99 does not exist
        }
        const whole = `${jsonText(
          {
            format: 'kvbench-export',
            version: 1,
            kvbenchVersion: KVBENCH_VERSION,
            exportedAt: new Date().toISOString(),
            method: model.report.method,
            filter: model.filter,
            excludeFlagged: model.report.excludeFlagged,
            units: 'metric units are in each metric definition (bytes, bytes/s, ms, tok/s); trial options use the reference units (GiB, seconds)',
            metrics: METRICS,
            trials: model.trials.map((t) => ({ ...t, hardware: model.hardware.get(t.id) ?? null })),
            report: { scenarios: model.report, tiers: model.tiers },
          },
          2,
        )}\n`;
        expect((await bytesOf(jsonChunks(model))).toString()).toBe(whole);
        expect(whole).toContain('\\u009b'); // the failed trial's reason, escaped in its piece as in the whole
        expect([...jsonChunks(model)].length).toBeGreaterThan(model.trials.length);
      }
      const none = { ...buildExportModel(s, {}, { includeIncomplete: false, stated: null, whereToLook: 'nowhere' }), trials: [] };
      expect(JSON.parse((await bytesOf(jsonChunks(none))).toString()).trials).toEqual([]);
      expect((await bytesOf(jsonChunks(none))).toString()).toContain('"trials": [],\n');
    } finally {
      s.close();
    }
  });

  it('jsonArrayTexts: jsonText of the array, at any depth, empty or not', () => {
    const items = [{ a: 1, b: [1, 2, { c: 'x\u2028' }], d: {} }, 'two', null, undefined, [], [3]];
    for (const list of [items, [], [{}]]) {
      expect([...jsonArrayTexts(list, 2)].join('')).toBe(jsonText(list, 2));
      expect(`{\n  "k": ${[...jsonArrayTexts(list, 2, 1)].join('')}\n}`).toBe(jsonText({ k: list }, 2));
      expect(`{\n    "k": {\n        "l": ${[...jsonArrayTexts(list, 4, 2)].join('')}\n    }\n}`).toBe(jsonText({ k: { l: list } }, 4));
    }
  });

  it('a full disk: the export fails saying so, the file it was to replace is as it was, no temporary left', async (ctx) => {
    const dir = tempDir();
    const db = database(dir);
    const disk = path.join(dir, 'disk');
    fs.mkdirSync(disk);
    mountTmpfsOrSkip(ctx, disk, '1m');
    const file = path.join(disk, 'trials.json');
    fs.writeFileSync(file, 'the export before');
    fillUntilFull(path.join(disk, 'filler'));
    const s = openStore(db, { readonly: true });
    try {
      const model = buildExportModel(s, {}, { includeIncomplete: false, stated: null, whereToLook: 'nowhere' });
      for (const format of ['json', 'xlsx', 'csv'] as const) {
        const failed = await writeExport(model, format, file).then(() => null, (err: unknown) => err);
        expect(failed).toBeInstanceOf(FileWriteError);
        expect((failed as FileWriteError).code).toBe('ENOSPC');
        expect(fs.readFileSync(file, 'utf8')).toBe('the export before');
        expect(fs.readdirSync(disk).sort()).toEqual(['filler', 'trials.json']);
      }
    } finally {
      s.close();
    }
    const r = await runInProcess(() => exportCommand(['--db', db, '--out', file]));
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`kvbench export failed (EXPORT_FAILED): could not write ${file}: the disk holding ${disk} is full (ENOSPC)\n`);
    expect(fs.readdirSync(disk).sort()).toEqual(['filler', 'trials.json']);
  });
});

describe('history --json, written a page at a time', () => {
  it('--limit 0 reads its trials in pages, never all at once, and prints the whole array as before', async () => {
    const dir = tempDir();
    const db = database(dir);
    const s = openStore(db, { readonly: true });
    const expected = `${jsonText(s.listTrials().map((t) => ({ ...t, cautions: cautionsOf(t).map((c) => c.message) })), 2)}\n`;
    s.close();
    const listTrials = vi.spyOn(Store.prototype, 'listTrials');
    const all = await runInProcess(() => historyCommand(['--db', db, '--limit', '0', '--json']));
    expect(all.code).toBe(0);
    expect(all.stdout).toBe(expected);
    expect(listTrials).not.toHaveBeenCalled();
    const some = await runInProcess(() => historyCommand(['--db', db, '--limit', '2', '--json']));
    expect(JSON.parse(some.stdout)).toEqual(JSON.parse(expected).slice(0, 2));
    const none = await runInProcess(() => historyCommand(['--db', db, '--limit', '0', '--json', '--scenario', 'gpu-only']));
    expect(none.stdout).toBe('[]\n');
  });
});
