// A suite started by an older kvbench, resumed by this one (review rev13-upgrade #4): the resume says
// which version started it, measured its trials and runs the rest, and where their metric
// definitions differ it is refused unless the user consents (the CLI's --across-versions, the
// app's Resume confirmation), in the same words. The older suite is made by rolling the stored
// versions of a suite this kvbench ran back to 0.6.0, as an upgrade between start and resume leaves it.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createBackend } from '../../../src-main/server/backend.ts';
import { LATEST_SCHEMA_VERSION } from '../../../src-main/store/open-store.ts';
import { pagesOf, scribbled } from '../../support/damaged-file.ts';
import { suiteCommand } from '../../../src-main/cli/suite-command.ts';
import { openDatabase } from '../../../src-main/store/sqlite.ts';
import type { ResponseOf, Result } from '../../../src-shared/ipc/contract.ts';
import { KVBENCH_VERSION } from '../../../src-shared/domain/version.ts';
import { resumeVersionsText } from '../../../src-shared/domain/resume-versions.ts';
import { removeTempDirs, tempDir } from '../store/fixtures.ts';
import { runInProcess as run } from '../cli/in-process.ts';
import { testBackend, type EngineBehaviour, type TestBackend } from './backend-harness.ts';

const open: TestBackend[] = [];
afterEach(async () => {
  for (const t of open.splice(0)) await t.backend.close();
  removeTempDirs();
});

function ok<T>(r: Result<T>): T {
  if (!r.ok) throw new Error(`expected ok, got ${r.error.code}: ${r.error.message}`);
  return r.value;
}

async function idle(t: TestBackend): Promise<void> {
  await t.waitFor('suite.finished');
  t.events.splice(0);
  while ((ok(await t.backend.invoke('suite.status', {})) as { state: string }).state !== 'idle') await new Promise((r) => setTimeout(r, 5));
}

/** A storage-only suite whose first trial ended partial (a full disk) and second completed, as kvbench `version` would have stored it. */
async function suiteStartedBy(version: string, behaviours: EngineBehaviour[] = ['disk-full', 'complete']): Promise<{ t: TestBackend; suiteId: number }> {
  const t = await testBackend({ behaviours });
  open.push(t);
  const { suiteId } = ok(await t.backend.invoke('suite.start', { cacheDir: t.cacheDir, profile: 'smoke', trials: 2, scenarios: ['storage-only'], probe: false })) as { suiteId: number };
  await idle(t);
  const db = openDatabase(t.db);
  db.prepare('UPDATE suites SET kvbench_version = ? WHERE id = ?').run(version, suiteId);
  db.prepare('UPDATE trials SET kvbench_version = ?, measured_by_version = ? WHERE suite_id = ?').run(version, version, suiteId);
  db.close();
  return { t, suiteId };
}

const trialCount = (file: string): number => {
  const db = openDatabase(file);
  try {
    return (db.prepare('SELECT count(*) AS n FROM trials').get() as { n: number }).n;
  } finally {
    db.close();
  }
};

describe('resuming a suite an older kvbench started', () => {
  it('says the versions and the definitions that differ, and runs only with consent: the app', async () => {
    const { t, suiteId } = await suiteStartedBy('0.6.0');
    const check = ok(await t.backend.invoke('suite.resumeCheck', { suiteId })) as ResponseOf<'suite.resumeCheck'>;
    expect(check).toMatchObject({ startedBy: '0.6.0', measuredBy: ['0.6.0'], now: KVBENCH_VERSION, needsConsent: true });
    expect(check.changes.map((c) => c.metric)).toEqual(expect.arrayContaining(['storage_read_p95_ms_per_mib', 'storage_write_p95_ms_per_mib']));
    expect(check.text).toMatch(
      new RegExp(`^suite ${suiteId} was started by kvbench 0\\.6\\.0 \\(its complete trials were measured by kvbench 0\\.6\\.0\\); the trials left run on kvbench ${KVBENCH_VERSION.replace(/\./g, '\\.')}, whose definitions differ for .*storage_write_p95_ms_per_mib.* \\(changed in 0\\.7\\.0\\)`),
    );

    const refused = await t.backend.invoke('suite.resume', { suiteId });
    expect(refused).toMatchObject({ ok: false, error: { code: 'VALIDATION' } });
    expect(!refused.ok && refused.error.message).toBe(`${check.text}. Resume it anyway from History, whose Resume asks you to confirm it, or start a new suite so that every trial is measured by kvbench ${KVBENCH_VERSION}`);
    expect(trialCount(t.db)).toBe(2); // nothing ran

    ok(await t.backend.invoke('suite.resume', { suiteId, acrossVersions: true }));
    expect(await t.waitFor('suite.finished')).toMatchObject({ counts: { complete: 1, partial: 0 } });
    expect(trialCount(t.db)).toBe(3);
  });

  it('is refused by kvbench suite --resume without --across-versions, in the same words, before anything is detected or run', async () => {
    const { t, suiteId } = await suiteStartedBy('0.6.0');
    const check = ok(await t.backend.invoke('suite.resumeCheck', { suiteId })) as ResponseOf<'suite.resumeCheck'>;
    await t.backend.close();
    open.splice(0);
    const r = await run(() => suiteCommand(['--resume', String(suiteId), '--db', t.db]));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`kvbench suite: ${check.text}. Resume it anyway with --across-versions, or start a new suite so that every trial is measured by kvbench ${KVBENCH_VERSION}\n`);
    expect(r.stderr).not.toMatch(/Detecting hardware/);
    expect(trialCount(t.db)).toBe(2);
    const misplaced = await run(() => suiteCommand(['--cache-dir', t.cacheDir, '--across-versions', '--plan', '--db', t.db]));
    expect(misplaced.code).toBe(1);
    expect(misplaced.stderr).toContain('--across-versions is for --resume');
  });

  it('says nothing where this kvbench started the suite, and only the versions where no definition differs', async () => {
    const { t, suiteId } = await suiteStartedBy(KVBENCH_VERSION);
    expect(ok(await t.backend.invoke('suite.resumeCheck', { suiteId }))).toMatchObject({ text: null, needsConsent: false, changes: [] });
    // Text only: a version whose definitions are this one's (none of the listed changes lies between them).
    expect(resumeVersionsText({ suiteId: 4, startedBy: '0.7.0', measuredBy: ['0.7.0'], now: '0.7.1', changes: [] })).toBe(
      'suite 4 was started by kvbench 0.7.0 (its complete trials were measured by kvbench 0.7.0); the trials left run on kvbench 0.7.1; no metric its complete trials have changed definition between these versions',
    );
  });

  it('is refused first for what stops any suite (BUSY, a damaged or a newer database), not with the consent a confirmation cannot help (rev14 #2)', async () => {
    const { t, suiteId } = await suiteStartedBy('0.6.0', ['disk-full', 'complete', 'hang']);
    // Another suite running: BUSY, whatever the versions.
    ok(await t.backend.invoke('suite.start', { cacheDir: t.cacheDir, profile: 'smoke', trials: 1, scenarios: ['storage-only'], probe: false }));
    await t.waitFor('suite.trialProgressed'); // the hanging engine answers a cancel from then on
    expect(await t.backend.invoke('suite.resume', { suiteId })).toMatchObject({ ok: false, error: { code: 'BUSY' } });
    ok(await t.backend.invoke('suite.cancel', {}));
    await idle(t);
    await t.backend.close();
    open.splice(0);

    const dir = tempDir();
    const backendOn = (databasePath: string) =>
      createBackend({
        mode: 'browser',
        settingsFile: path.join(dir, `${path.basename(databasePath)}.settings.json`),
        defaults: { databasePath, defaultCacheDir: '', byteUnits: 'decimal', latencyUnit: 'ms' },
        detect: () => Promise.reject(new Error('no detection in this test')),
        log: () => undefined,
      });
    // A damaged copy (an index page scribbled over): DB_CORRUPT, as its resumeCheck's consent would only lead to.
    const copy = path.join(dir, 'straddled.db');
    fs.copyFileSync(t.db, copy);
    const indexPage = [...pagesOf(copy)].find(([key]) => key.startsWith('trials_') && key.endsWith('/leaf'))![1][0];
    const damaged = scribbled(copy, 'damaged.db', [indexPage]);
    const b1 = await backendOn(damaged);
    try {
      expect(ok(await b1.invoke('app.info', {}))).toMatchObject({ databaseDamaged: expect.anything() });
      expect(await b1.invoke('suite.resume', { suiteId })).toMatchObject({ ok: false, error: { code: 'DB_CORRUPT' } });
    } finally {
      await b1.close();
    }
    // A newer kvbench's, read read-only: DB_TOO_NEW.
    const newer = path.join(dir, 'newer.db');
    fs.copyFileSync(copy, newer);
    const raw = openDatabase(newer);
    raw.exec(`PRAGMA user_version = ${LATEST_SCHEMA_VERSION + 2}; DELETE FROM kvbench_meta;`);
    raw.prepare("INSERT INTO kvbench_meta (key, value) VALUES ('schema_written_by', '9.1.0'), ('readable_by_schema', ?)").run(String(LATEST_SCHEMA_VERSION));
    raw.close();
    const b2 = await backendOn(newer);
    try {
      expect(await b2.invoke('suite.resume', { suiteId })).toMatchObject({ ok: false, error: { code: 'DB_TOO_NEW' } });
    } finally {
      await b2.close();
    }
  });

  it('with no trial to run, nothing crosses versions: the app and the CLI neither refuse nor say the trials left run on this kvbench (rev14 #3)', async () => {
    const { t, suiteId } = await suiteStartedBy('0.6.0', ['complete']);
    expect(trialCount(t.db)).toBe(2);
    // The app: resumes (nothing to run), without the consent.
    ok(await t.backend.invoke('suite.resume', { suiteId }));
    expect(await t.waitFor('suite.finished')).toMatchObject({ counts: { complete: 0, partial: 0 } });
    await idle(t);
    expect(trialCount(t.db)).toBe(2);
    await t.backend.close();
    open.splice(0);
    // The CLI's plan: no trial to run, and no note of versions or of a refusal.
    const plan = await run(() => suiteCommand(['--resume', String(suiteId), '--plan', '--db', t.db]));
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toContain('No trial to run.');
    expect(plan.stderr).not.toContain('the trials left run on');
    expect(plan.stderr).not.toContain('--across-versions');
  });

  it('with trials to run, the CLI\'s plan says the resume is refused without --across-versions (rev14 #3)', async () => {
    const { t, suiteId } = await suiteStartedBy('0.6.0');
    const check = ok(await t.backend.invoke('suite.resumeCheck', { suiteId })) as ResponseOf<'suite.resumeCheck'>;
    await t.backend.close();
    open.splice(0);
    const plan = await run(() => suiteCommand(['--resume', String(suiteId), '--plan', '--db', t.db]));
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stderr).toContain(`note: without --across-versions the resume is refused: ${check.text}. Resume it anyway with --across-versions`);
  });
});
