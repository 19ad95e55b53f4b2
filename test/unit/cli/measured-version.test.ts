// An imported trial is judged by the kvbench that measured it, not the one that imported it
// (review rev7-code #3): a 0.1.0 file, whose window drained in-flight requests, is no stall.
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { importCommand } from '../../../src-main/cli/import-command.ts';
import { reportCommand } from '../../../src-main/cli/report-command.ts';
import type { ScenarioReport } from '../../../src-main/export/report-model.ts';
import { openStore } from '../../../src-main/store/open-store.ts';
import { KVBENCH_VERSION } from '../../../src-shared/domain/version.ts';
import { removeTempDirs, stalledResults, tempDir, writeResults } from '../store/fixtures.ts';
import { runInProcess as run } from './in-process.ts';

afterEach(() => removeTempDirs());

/** A 3 s run whose window closed after 9 s, measured by kvbench `version`, imported; its cautions and stored trial. */
async function importSlow(version: string): Promise<{ cautions: string[]; measuredBy: string | null; storedBy: string }> {
  const dir = tempDir();
  const db = path.join(dir, 'kvbench.db');
  const imported = await run(() => importCommand([writeResults(dir, 'slow.json', stalledResults(version)), '--system', 's', '--db', db]));
  expect(imported.code, imported.stderr).toBe(0);
  const json = await run(() => reportCommand(['--db', db, '--json']));
  expect(json.code, json.stderr).toBe(0);
  const report = (JSON.parse(json.stdout) as { scenarios: ScenarioReport }).scenarios;
  const store = openStore(db);
  try {
    const [t] = store.listTrials({});
    return { cautions: report.scenarios.flatMap((s) => s.cautions.map((c) => c.message)), measuredBy: t.measuredByVersion, storedBy: t.kvbenchVersion };
  } finally {
    store.close();
  }
}

describe('the measuring version of an imported trial', () => {
  it('is the file\'s, and 0.1.0\'s draining window is no stall', async () => {
    const old = await importSlow('0.1.0');
    expect(old).toEqual({ cautions: [], measuredBy: '0.1.0', storedBy: KVBENCH_VERSION });
  });

  it('still flags the same window measured by a fixed-window kvbench', async () => {
    const fixed = await importSlow('0.5.0');
    expect(fixed.measuredBy).toBe('0.5.0');
    expect(fixed.cautions).toHaveLength(1);
    expect(fixed.cautions[0]).toMatch(/^the engine stalled \(the measured window closed 6\.0 s after its planned 3\.0 s\)/);
  });
});
