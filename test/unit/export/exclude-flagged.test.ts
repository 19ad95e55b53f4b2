// Excluding flagged trials, asked for: results files imported into a real database under two drive
// labels, read back through the store, compared and reported with and without the exclusion.
import fs from 'node:fs';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterEach, describe, expect, it } from 'vitest';
import { buildExportModel } from '../../../src-main/export/export-model.ts';
import { jsonChunks } from '../../../src-main/export/export-trials.ts';
import { bytesOf } from '../../support/write-export.ts';
import { writeExport } from '../../support/write-export.ts';
import { formatComparison, formatScenarioReport, formatTierComparison } from '../../../src-main/export/render-text.ts';
import { buildSystemComparison, COMPARISON_METHOD, FLAGGED_EXCLUDED_METHOD, type SystemComparison } from '../../../src-main/export/report-model.ts';
import { openStore } from '../../../src-main/store/open-store.ts';
import type { Store } from '../../../src-main/store/store.ts';
import { removeTempDirs, tempDir } from '../store/fixtures.ts';
import { dbIn, importDrive } from './drive-imports.ts';

let store: Store | null = null;
afterEach(() => {
  store?.close();
  store = null;
  removeTempDirs();
});

const U8 = { options: { numUsers: 8 } };
const U16 = { options: { numUsers: 16 } };

/**
 * Three configurations (4, 8 and 16 users) on two drives. A: at 4 users three clean trials, one on
 * a RAM disk (3× faster) and one whose engine stalled; clean at 8 and 16 users. B: at 4 users one of
 * three trials read through the page cache; at 8 users two of three; at 16 users both on a RAM disk.
 */
async function seed(): Promise<{ dir: string; store: Store }> {
  const dir = tempDir();
  const s = openStore(dbIn(dir));
  store = s;
  await importDrive(s, dir, 'A-disk', [{ tokPerS: 100 }, { tokPerS: 102 }, { tokPerS: 101 }, { tokPerS: 300, ramBacked: true }, { tokPerS: 40, stalledS: 10 }]);
  await importDrive(s, dir, 'A-disk', [{ tokPerS: 200, ...U8 }, { tokPerS: 202, ...U8 }, { tokPerS: 201, ...U8 }]);
  await importDrive(s, dir, 'A-disk', [{ tokPerS: 400, ...U16 }, { tokPerS: 404, ...U16 }]);
  await importDrive(s, dir, 'B-disk', [{ tokPerS: 90 }, { tokPerS: 91 }, { tokPerS: 95, readCoverage: 0.3 }]);
  await importDrive(s, dir, 'B-disk', [{ tokPerS: 180, ...U8 }, { tokPerS: 185, readCoverage: 0.3, ...U8 }, { tokPerS: 186, readCoverage: 0.3, ...U8 }]);
  await importDrive(s, dir, 'B-disk', [{ tokPerS: 350, ramBacked: true, ...U16 }, { tokPerS: 355, ramBacked: true, ...U16 }]);
  return { dir, store: s };
}

function compare(s: Store, excludeFlagged?: boolean): SystemComparison {
  const side = (ref: string) => {
    const d = s.resolveDrive(ref);
    return { label: d.label, id: d.id, trials: s.listTrials({ driveIds: [d.id] }) };
  };
  return buildSystemComparison(side('A-disk'), side('B-disk'), { kind: 'drive', ...(excludeFlagged === undefined ? {} : { excludeFlagged }) });
}

const CONFIG = (users: number): string => `tiny-1b, ${users} users, 4 s, CPU 0 GiB, GPU 0 GiB, generation none, storage 1 GiB, warm-up 1`;

describe('a comparison that excludes flagged trials', () => {
  it('by default counts and marks flagged trials as before: nothing left out, no exclusion recorded', async () => {
    const { store: s } = await seed();
    for (const c of [compare(s), compare(s, false)]) {
      expect(c.excludeFlagged).toBe(false);
      expect(c.excludedFlagged).toBeNull();
      expect(c.method).toBe(COMPARISON_METHOD);
      expect(c.matched).toBe(3);
      expect(c.cautions).toEqual({
        a: { matchedTrials: 10, flaggedTrials: 2, traceOnly: 0, ramBacked: 1, pageCache: 0, stalled: 1, spilled: 0, queueingBound: 0, gpuTier: 0, other: 0, ramBackings: [{ backing: 'loop0 on tmpfs', trials: 1 }] },
        b: { matchedTrials: 8, flaggedTrials: 5, traceOnly: 0, ramBacked: 2, pageCache: 3, stalled: 0, spilled: 0, queueingBound: 0, gpuTier: 0, other: 0, ramBackings: [{ backing: 'loop0 on tmpfs', trials: 2 }] },
      });
      const tput = c.metrics.find((m) => m.metric.key === 'wall_clock_throughput_tok_per_s')!;
      const rows = tput.configs.map((x) => [x.numUsers!, x.nA, x.nB, x.flaggedA, x.flaggedB, x.excludedA, x.excludedB]);
      expect(rows.sort((x, y) => x[0] - y[0])).toEqual([
        [4, 5, 3, 2, 1, 0, 0],
        [8, 3, 3, 0, 2, 0, 0],
        [16, 2, 2, 0, 2, 0, 0],
      ]);
      expect(c.notes).toContainEqual(expect.stringMatching(/^the ratios, win rates and verdicts count those trials like any other/));
      expect(formatComparison(c, { perConfig: true })).not.toMatch(/left out A\/B|--exclude-flagged/);
    }
  });

  it('leaves them out of every row and verdict, says per side how many and why, and which configurations lost their test or their match', async () => {
    const { store: s } = await seed();
    const c = compare(s, true);
    expect(c.excludeFlagged).toBe(true);
    expect(c.method).toBe(`${COMPARISON_METHOD}; ${FLAGGED_EXCLUDED_METHOD}`);
    // Counted over the configurations both sides ran before the exclusion.
    expect(c.excludedFlagged).toEqual({
      a: { matchedTrials: 10, flaggedTrials: 2, traceOnly: 0, ramBacked: 1, pageCache: 0, stalled: 1, spilled: 0, queueingBound: 0, gpuTier: 0, other: 0, ramBackings: [{ backing: 'loop0 on tmpfs', trials: 1 }] },
      b: { matchedTrials: 8, flaggedTrials: 5, traceOnly: 0, ramBacked: 2, pageCache: 3, stalled: 0, spilled: 0, queueingBound: 0, gpuTier: 0, other: 0, ramBackings: [{ backing: 'loop0 on tmpfs', trials: 2 }] },
    });
    // What is left counts no flagged trial, so no caution note says the verdicts count them.
    expect(c.cautions).toEqual({
      a: { matchedTrials: 6, flaggedTrials: 0, traceOnly: 0, ramBacked: 0, pageCache: 0, stalled: 0, spilled: 0, queueingBound: 0, gpuTier: 0, other: 0, ramBackings: [] },
      b: { matchedTrials: 3, flaggedTrials: 0, traceOnly: 0, ramBacked: 0, pageCache: 0, stalled: 0, spilled: 0, queueingBound: 0, gpuTier: 0, other: 0, ramBackings: [] },
    });
    // 16 users: B had only RAM-disk trials, so the configuration is no longer matched.
    expect([c.matched, c.unmatchedA, c.unmatchedB]).toEqual([2, 1, 0]);
    const tput = c.metrics.find((m) => m.metric.key === 'wall_clock_throughput_tok_per_s')!;
    expect(tput.configs.map((x) => [x.numUsers, x.nA, x.nB, x.flaggedA, x.flaggedB, x.excludedA, x.excludedB])).toEqual([
      [4, 3, 2, 0, 0, 2, 1],
      [8, 3, 1, 0, 0, 0, 2],
    ]);
    // The RAM disk's 300 tok/s and the stall's 40 are gone from A's median; at 8 users B has one trial left: no test.
    expect(tput.configs[0].medianA).toBe(101);
    expect(tput.configs[0].withinNoise).toBe(false);
    expect(tput.configs[1].withinNoise).toBeNull();
    expect(tput.tested).toBe(1);
    expect(tput.verdict).toBe('a');
    expect(c.notes).toEqual(
      expect.arrayContaining([
        'A (A-disk): 2 of its 10 matched trial(s) left out as flagged (1 on a RAM-backed cache directory, 1 where the engine stalled)',
        'B (B-disk): 5 of its 8 matched trial(s) left out as flagged (2 on a RAM-backed cache directory, 3 with storage reads the page cache served)',
        `1 matched configuration(s) had only flagged trials on a side, so with those left out they are not compared: storage-only: ${CONFIG(16)} (A 2 of 2 trial(s) unflagged, B 0 of 2)`,
        '1 matched configuration(s) fell below 2 trials on a side with the flagged trials left out, so they lose their noise test ' +
          `(their noise is unknown; a verdict counts them only where no configuration has 2 trials a side): storage-only: ${CONFIG(8)} (A 3 of 3 trial(s) unflagged, B 1 of 3)`,
      ]),
    );
    expect(c.notes).not.toContainEqual(expect.stringMatching(/count those trials like any other/));
    const text = formatComparison(c, { perConfig: true });
    expect(text).toContain(
      'Flagged trials excluded (--exclude-flagged): A 2 of 10 matched trial(s) left out (1 on a RAM-backed cache directory, 1 where the engine stalled); ' +
        'B 5 of 8 matched trial(s) left out (2 on a RAM-backed cache directory, 3 with storage reads the page cache served).',
    );
    expect(text).toMatch(/^storage-only: tiny-1b, 4 users.*\s2\/1$/m);
    expect(text).toMatch(/^storage-only: tiny-1b, 8 users.*\s\?\s+—\s+0\/2$/m);
    expect(text).not.toMatch(/flagged A\/B/);
  });

  it('with no flagged trial among the matched ones, says it left nothing out', async () => {
    const dir = tempDir();
    const s = openStore(dbIn(dir));
    store = s;
    await importDrive(s, dir, 'A-disk', [{ tokPerS: 100 }, { tokPerS: 101 }]);
    await importDrive(s, dir, 'B-disk', [{ tokPerS: 90 }, { tokPerS: 91 }]);
    const c = compare(s, true);
    expect(c.excludedFlagged!.a).toEqual({ matchedTrials: 2, flaggedTrials: 0, traceOnly: 0, ramBacked: 0, pageCache: 0, stalled: 0, spilled: 0, queueingBound: 0, gpuTier: 0, other: 0, ramBackings: [] });
    expect(c.notes).toEqual(['flagged trials excluded: no matched trial is flagged, so none was left out']);
    expect(c.metrics[0].configs[0]).toMatchObject({ nA: 2, nB: 2, excludedA: 0, excludedB: 0 });
  });
});

describe('a report and export that exclude flagged trials', () => {
  const modelOf = (s: Store, excludeFlagged?: boolean) =>
    buildExportModel(s, { drives: ['A-disk'] }, { includeIncomplete: false, stated: null, whereToLook: 'nowhere', ...(excludeFlagged === undefined ? {} : { excludeFlagged }) });

  it('lists each flagged trial as excluded with why, aggregates the rest, and the tier comparison says so', async () => {
    const { store: s } = await seed();
    const before = modelOf(s);
    expect(before.report.excludeFlagged).toBe(false);
    expect(before.report.excludedFlagged).toBeNull();
    const four = (m: typeof before) => m.report.scenarios.find((x) => x.options.numUsers === 4)!;
    expect(four(before).trialIds).toHaveLength(5);
    expect(four(before).excluded).toEqual([]);
    expect(four(before).cautions).toHaveLength(2);

    const m = modelOf(s, true);
    expect(m.report.excludeFlagged).toBe(true);
    expect(m.report.excludedFlagged).toEqual({ trials: 2, traceOnly: 0, ramBacked: 1, pageCache: 0, stalled: 1, spilled: 0, queueingBound: 0, gpuTier: 0, other: 0 });
    expect(four(m).trialIds).toHaveLength(3);
    expect(four(m).cautions).toEqual([]);
    expect(four(m).excluded.map((x) => [x.status, x.flags, x.supersededBy])).toEqual([
      ['complete', ['ram-backed'], null],
      ['complete', ['stalled'], null],
    ]);
    expect(four(m).excluded[0].reason).toMatch(/^the cache directory was RAM-backed/);
    expect(four(m).excluded[1].reason).toMatch(/^the engine stalled \(the measured window closed 10\.0 s after its planned 4\.0 s\)/);
    expect(four(m).metrics.find((x) => x.metric.key === 'wall_clock_throughput_tok_per_s')!.aggregate).toMatchObject({ n: 3, median: 101 });
    expect(m.tiers.excludeFlagged).toBe(true);

    const text = formatScenarioReport(m.report);
    expect(text).toContain('Flagged trials are excluded (--exclude-flagged): 2 trial(s) left out (1 on a RAM-backed cache directory, 1 where the engine stalled), each listed with why.');
    expect(text).toMatch(/! trial #4 \(id \d+\) FLAGGED, excluded: the cache directory was RAM-backed/);
    expect(text).not.toMatch(/COMPLETE, excluded/);
    expect(formatTierComparison(m.tiers)).toMatch(/^Tier comparison \(medians across complete trials, flagged ones excluded; /);
    expect(formatScenarioReport(before.report)).not.toMatch(/excluded \(--exclude-flagged\)|FLAGGED, excluded/);
  });

  it('XLSX and JSON record that the exclusion was on, and list each trial left out with its flags', async () => {
    const { dir, store: s } = await seed();
    const read = async (excludeFlagged: boolean) => {
      const file = path.join(dir, `out-${excludeFlagged}.xlsx`);
      await writeExport(modelOf(s, excludeFlagged), 'xlsx', file);
      const wb = new ExcelJS.Workbook();
      await wb.xlsx.readFile(file);
      const rows = (name: string) => {
        const ws = wb.getWorksheet(name)!;
        const head = (ws.getRow(1).values as unknown[]).slice(1) as string[];
        return ws.getRows(2, ws.rowCount - 1)!.map((r) => Object.fromEntries(head.map((h, i) => [h, r.getCell(i + 1).value])));
      };
      // The fixture's files name kvbench 0.1.0 (the stalled one 0.5.0): the notes of metrics of an older definition are another test's.
      return { about: Object.fromEntries(rows('About').map((r) => [r.item, r.value])), notes: rows('Notes').filter((n) => n.section === 'scenarios' && n.kind !== 'definition') };
    };
    const on = await read(true);
    expect(on.about['flagged trials']).toBe(
      'EXCLUDED from aggregates (exclude flagged trials was on): 2 trial(s) left out (1 on a RAM-backed cache directory, 1 where the engine stalled), ' +
        'each in Notes as "excluded (flagged: …)" with why; Trials still lists every trial, with its caution',
    );
    expect(on.notes.map((n) => n.kind)).toEqual(['excluded (flagged: ram-backed)', 'excluded (flagged: stalled)']);
    const off = await read(false);
    expect(off.about['flagged trials']).toBe('included in aggregates and marked (the caution column in Trials, "flagged" in Scenarios and Notes)');
    expect(off.notes.map((n) => n.kind)).toEqual(['flagged', 'flagged']);

    const json = JSON.parse((await bytesOf(jsonChunks(modelOf(s, true)))).toString()) as { excludeFlagged: boolean; method: string; trials: unknown[]; report: { scenarios: { excludedFlagged: unknown } } };
    expect(json.excludeFlagged).toBe(true);
    expect(json.method).toContain(FLAGGED_EXCLUDED_METHOD);
    expect(json.trials).toHaveLength(10);
    expect(json.report.scenarios.excludedFlagged).toEqual({ trials: 2, traceOnly: 0, ramBacked: 1, pageCache: 0, stalled: 1, spilled: 0, queueingBound: 0, gpuTier: 0, other: 0 });
    expect((JSON.parse((await bytesOf(jsonChunks(modelOf(s)))).toString()) as { excludeFlagged: boolean }).excludeFlagged).toBe(false);
    expect(fs.existsSync(path.join(dir, 'out-true.xlsx'))).toBe(true);
  });
});
