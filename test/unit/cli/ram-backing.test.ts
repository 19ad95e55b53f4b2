// What held a RAM-backed cache directory in memory goes with the trial, from its results into the
// store and into every place its caution is shown: the report (and the exports made from it),
// `kvbench history`, a comparison, and the app's trial dialog (trials.get). A trial stored before
// kvbench kept it keeps its flag and says the backing was not recorded: never a guess.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { exportCommand } from '../../../src-main/cli/export-command.ts';
import { historyCommand } from '../../../src-main/cli/history-command.ts';
import { reportCommand } from '../../../src-main/cli/report-command.ts';
import type { ScenarioReport, SystemComparison, TierComparison } from '../../../src-main/export/report-model.ts';
import { LATEST_SCHEMA_VERSION } from '../../../src-main/store/migrations.ts';
import { openStore } from '../../../src-main/store/open-store.ts';
import type { Result } from '../../../src-shared/ipc/contract.ts';
import { testBackend } from '../server/backend-harness.ts';
import { kvbenchResults, removeTempDirs, tempDir } from '../store/fixtures.ts';
import { dbIn, importDrive } from '../export/drive-imports.ts';
import { runInProcess } from './in-process.ts';

afterEach(removeTempDirs);

const LOOP = 'loop0 → /dev/shm/d.img on tmpfs';
const caution = (backing: string): string => `the cache directory was RAM-backed (${backing}): its storage numbers describe memory, not a drive`;
const NOT_RECORDED = 'backing not recorded by the kvbench that stored it';

const cli = (dir: string, command: (argv: string[]) => Promise<number>, ...args: string[]) => runInProcess(() => command([...args, '--db', dbIn(dir)]));

describe('the backing of a RAM-backed cache directory', () => {
  it('is stored with the trial as its results say it, and said by the report, the export, history and a comparison', async () => {
    const dir = tempDir();
    const store = openStore(dbIn(dir));
    let ids: number[];
    try {
      ids = await importDrive(store, dir, 'A-ram', [300, 310].map((tokPerS) => ({ tokPerS, ramBacked: true, ramBacking: LOOP })));
      await importDrive(store, dir, 'B-disk', [{ tokPerS: 100 }, { tokPerS: 101 }]);
      expect(ids.map((id) => store.getTrial(id)!.storageRamBacking)).toEqual([LOOP, LOOP]);
      expect(store.listTrials({ driveIds: [store.getTrial(ids[0])!.driveId!] }).map((t) => t.storageRamBacking)).toEqual([LOOP, LOOP]);
      // A trial on a disk has nothing there.
      expect(store.listTrials({}).filter((t) => !ids.includes(t.id)).map((t) => t.storageRamBacking)).toEqual([null, null]);
    } finally {
      store.close();
    }

    const report = await cli(dir, reportCommand, '--system', 'rig');
    expect(report.code, report.stderr).toBe(0);
    expect(report.stdout).toContain(`FLAGGED: ${caution(LOOP)}`);
    const out = path.join(dir, 'rig.csv');
    expect((await cli(dir, exportCommand, '--system', 'rig', '--out', out)).code).toBe(0);
    expect(fs.readFileSync(out, 'utf8')).toContain(caution(LOOP));

    const history = await cli(dir, historyCommand);
    expect(history.code, history.stderr).toBe(0);
    expect(history.stdout).toContain(`   RAM-backed cache directory: ${LOOP} (trials ${[...ids].sort((a, b) => b - a).join(', ')})\n`);
    const json = JSON.parse((await cli(dir, historyCommand, '--json')).stdout) as { id: number; storageRamBacking: string | null; cautions: string[] }[];
    expect(json.filter((t) => ids.includes(t.id)).map((t) => [t.storageRamBacking, t.cautions])).toEqual([
      [LOOP, [caution(LOOP)]],
      [LOOP, [caution(LOOP)]],
    ]);

    const compare = await cli(dir, reportCommand, '--compare', 'A-ram', 'B-disk', '--drives', '--json');
    expect(compare.code, compare.stderr).toBe(0);
    const c = JSON.parse(compare.stdout) as SystemComparison;
    expect(c.cautions.a).toMatchObject({ ramBacked: 2, ramBackings: [{ backing: LOOP, trials: 2 }] });
    expect(c.cautions.b).toMatchObject({ ramBacked: 0, ramBackings: [] });
    expect(c.notes[0]).toBe(`A (A-ram): 2 of its 2 matched trial(s) ran on a RAM-backed cache directory (${LOOP}): their storage numbers describe memory, not a drive`);
  });

  it("of a file written before the chain was kept is that file's own words, and a side of several backings counts each", async () => {
    const dir = tempDir();
    const store = openStore(dbIn(dir));
    try {
      // drive-imports writes ram_filesystem 'loop0 on tmpfs' as every kvbench since RAM-backing was told does.
      await importDrive(store, dir, 'A-ram', [{ tokPerS: 300, ramBacked: true }, { tokPerS: 301, ramBacked: true, ramBacking: LOOP }, { tokPerS: 302, ramBacked: true, ramBacking: LOOP }]);
      await importDrive(store, dir, 'B-disk', [{ tokPerS: 100 }, { tokPerS: 101 }]);
    } finally {
      store.close();
    }
    const report = await cli(dir, reportCommand, '--system', 'rig');
    expect(report.stdout).toContain(`FLAGGED: ${caution('loop0 on tmpfs')}`);
    expect(report.stdout).toContain(`FLAGGED: ${caution(LOOP)}`);
    const c = JSON.parse((await cli(dir, reportCommand, '--compare', 'A-ram', 'B-disk', '--drives', '--json')).stdout) as SystemComparison;
    expect(c.cautions.a.ramBackings).toEqual([{ backing: LOOP, trials: 2 }, { backing: 'loop0 on tmpfs', trials: 1 }]);
    expect(c.notes[0]).toBe(`A (A-ram): 3 of its 3 matched trial(s) ran on a RAM-backed cache directory (${LOOP}: 2; loop0 on tmpfs: 1): their storage numbers describe memory, not a drive`);
  });

  it('of a trial stored before kvbench kept it is unknown: still flagged, read as it is or after the upgrade, never guessed', async () => {
    const dir = tempDir();
    const store = openStore(dbIn(dir));
    let id: number;
    try {
      [id] = await importDrive(store, dir, 'A-ram', [{ tokPerS: 300, ramBacked: true, ramBacking: LOOP }]);
      // The database as schema 4 left it: the flag among the metrics, no column for the backing.
      store.db.exec('ALTER TABLE trials DROP COLUMN storage_ram_backing; PRAGMA user_version = 4;');
    } finally {
      store.close();
    }
    const readOnly = openStore(dbIn(dir), { readonly: true });
    try {
      expect(readOnly.db.pragma('user_version', { simple: true })).toBe(4);
      const t = readOnly.getTrial(id)!;
      expect([t.metrics.storage_ram_backed, t.storageRamBacking]).toEqual([1, null]);
    } finally {
      readOnly.close();
    }
    const upgraded = openStore(dbIn(dir));
    try {
      expect(upgraded.db.pragma('user_version', { simple: true })).toBe(LATEST_SCHEMA_VERSION);
      const t = upgraded.getTrial(id)!;
      expect([t.metrics.storage_ram_backed, t.storageRamBacking]).toEqual([1, null]);
    } finally {
      upgraded.close();
    }
    const report = await cli(dir, reportCommand, '--system', 'rig');
    expect(report.stdout).toContain(`FLAGGED: ${caution(NOT_RECORDED)}`);
    expect(report.stdout).not.toContain(LOOP);
    const history = await cli(dir, historyCommand);
    expect(history.stdout).toContain(`   RAM-backed cache directory: ${NOT_RECORDED} (trial ${id})\n`);
  });

  it("is named in the tier comparison's note and each row's efficiency note as the rows' trials recorded it, not as the kinds of RAM backing", async () => {
    const dir = tempDir();
    const store = openStore(dbIn(dir));
    let old: number[];
    try {
      await importDrive(store, dir, 'A-ram', [300, 310].map((tokPerS) => ({ tokPerS, ramBacked: true, ramBacking: LOOP })));
      old = await importDrive(store, dir, 'C-ram', [{ tokPerS: 320, ramBacked: true, ramBacking: 'tmpfs' }]);
      await importDrive(store, dir, 'B-disk', [{ tokPerS: 100 }, { tokPerS: 101 }]);
      // C-ram's trial as one stored before kvbench kept the backing: the flag, and no backing.
      store.db.prepare('UPDATE trials SET storage_ram_backing = NULL WHERE id = ?').run(old[0]);
    } finally {
      store.close();
    }
    const json = await cli(dir, reportCommand, '--system', 'rig', '--json');
    expect(json.code, json.stderr).toBe(0);
    const { tiers } = JSON.parse(json.stdout) as { tiers: TierComparison };
    expect(tiers.notes).toContain(`2 row(s) ran on a RAM-backed cache directory (${LOOP}: 2; ${NOT_RECORDED}: 1): no storage efficiency there`);
    expect(tiers.notes.join('\n')).not.toContain('ramfs');
    expect(tiers.rows.map((r) => [r.driveLabel, r.storageReadEfficiencyNote, r.storageWriteEfficiencyNote])).toEqual([
      ['A-ram', caution(LOOP), caution(LOOP)],
      ['B-disk', 'no bandwidth probe of the drive', 'no bandwidth probe of the drive'],
      ['C-ram', caution(NOT_RECORDED), caution(NOT_RECORDED)],
    ]);
    const text = await cli(dir, reportCommand, '--system', 'rig');
    expect(text.stdout).toContain(`note: 2 row(s) ran on a RAM-backed cache directory (${LOOP}: 2; ${NOT_RECORDED}: 1): no storage efficiency there\n`);
  });

  it('is counted under the RAM-backing note in a row where only some trials were RAM-backed, and the page-cache note counts only the trials the page cache served', async () => {
    const dir = tempDir();
    const store = openStore(dbIn(dir));
    try {
      // D-mixed: 1 of 6 trials RAM-backed (the row's median is not "on RAM"); E-ram: 2 of 3 RAM-backed
      // (its median is), and its third trial's reads the page cache served; B-disk: neither.
      await importDrive(store, dir, 'D-mixed', [100, 101, 102, 103, 104, 105].map((tokPerS, i) => ({ tokPerS, ...(i === 2 ? { ramBacked: true, ramBacking: LOOP } : {}) })));
      await importDrive(store, dir, 'E-ram', [{ tokPerS: 300, ramBacked: true, ramBacking: 'tmpfs' }, { tokPerS: 301, ramBacked: true, ramBacking: 'tmpfs' }, { tokPerS: 302, readCoverage: 0.5 }]);
      await importDrive(store, dir, 'B-disk', [{ tokPerS: 110 }, { tokPerS: 111 }]);
    } finally {
      store.close();
    }
    const json = await cli(dir, reportCommand, '--system', 'rig', '--json');
    expect(json.code, json.stderr).toBe(0);
    const { scenarios, tiers } = JSON.parse(json.stdout) as { scenarios: ScenarioReport; tiers: TierComparison };
    expect(tiers.notes).toContain(
      `2 row(s) ran on a RAM-backed cache directory (tmpfs: 2; ${LOOP}: 1), some in only part of their trials ` +
        '(storage-only on rig · D-mixed: 1 of 6 trial(s); storage-only on rig · E-ram: 2 of 3 trial(s)): no storage efficiency there',
    );
    expect(tiers.notes).toContain(
      '1 row(s): the page cache served storage reads (storage-only on rig · E-ram: 1 of 3 trial(s)): their read numbers describe RAM, not the drive, so no read efficiency there',
    );
    expect(tiers.notes.join('\n')).not.toMatch(/D-mixed: \d of 6 trial\(s\)\): their read numbers/);
    expect(scenarios.scenarios.map((s) => [s.driveLabel, s.pageCacheFlagged, s.ramBackings])).toEqual([
      ['B-disk', 0, []],
      ['D-mixed', 0, [{ backing: LOOP, trials: 1 }]],
      ['E-ram', 1, [{ backing: 'tmpfs', trials: 2 }]],
    ]);
    const partCaution = (k: number, n: number, backing: string): string => `${k} of ${n} trial(s) ran on a RAM-backed cache directory (${backing}): their storage numbers describe memory, not a drive`;
    expect(tiers.rows.map((r) => [r.driveLabel, r.storageReadEfficiencyNote, r.storageWriteEfficiencyNote])).toEqual([
      ['B-disk', 'no bandwidth probe of the drive', 'no bandwidth probe of the drive'],
      ['D-mixed', partCaution(1, 6, LOOP), partCaution(1, 6, LOOP)],
      ['E-ram', `${partCaution(2, 3, 'tmpfs')}; the page cache served storage reads: they describe RAM, not the drive`, partCaution(2, 3, 'tmpfs')],
    ]);

    // A comparison counts them by the same rule (trialFlags): the RAM-backed trials under RAM, the page cache's apart.
    const c = JSON.parse((await cli(dir, reportCommand, '--compare', 'E-ram', 'D-mixed', '--drives', '--json')).stdout) as SystemComparison;
    expect([c.cautions.a.ramBacked, c.cautions.a.pageCache, c.cautions.b.ramBacked, c.cautions.b.pageCache]).toEqual([2, 1, 1, 0]);
  });

  it("is in the app's trial dialog: trials.get gives the trial's cautions as the report words them", async () => {
    const t = await testBackend();
    try {
      const r = kvbenchResults({ tokPerS: 300 });
      r.kvbench.tiers.storage.ram_backed = true;
      r.kvbench.tiers.storage.ram_filesystem = 'RAM disk';
      r.kvbench.tiers.storage.ram_backing_chain = 'zram1';
      const imp = (await t.backend.invoke('import.results', { files: [{ name: 'zram.json', text: JSON.stringify(r) }], systemLabel: 'lab' })) as Result<{ imported: { trialId: number }[] }>;
      if (!imp.ok) throw new Error(imp.error.message);
      const got = (await t.backend.invoke('trials.get', { id: imp.value.imported[0].trialId })) as Result<{ trial: { storageRamBacking: string | null }; cautions: string[] }>;
      if (!got.ok) throw new Error(got.error.message);
      expect(got.value.trial.storageRamBacking).toBe('zram1');
      expect(got.value.cautions).toEqual([caution('zram1')]);
    } finally {
      await t.backend.close();
    }
  });
});
