// A stored trial carries the engine's own page-cache verdict (results' kvbench.device_io.flagged):
// `kvbench report` on a real database of `kvbench import`ed files says what the engine said, never
// a second rule's opposite (review rev7-code #2, both of its repros).
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { importCommand } from '../../../src-main/cli/import-command.ts';
import { reportCommand } from '../../../src-main/cli/report-command.ts';
import type { ScenarioReport } from '../../../src-main/export/report-model.ts';
import type { RunResults } from '../../../src-shared/domain/results.ts';
import { kvbenchResults, removeTempDirs, tempDir, writeResults } from '../store/fixtures.ts';
import { runInProcess as run } from './in-process.ts';

afterEach(() => removeTempDirs());

async function reportOn(results: RunResults): Promise<{ text: string; cautions: string[] }> {
  const dir = tempDir();
  const db = path.join(dir, 'kvbench.db');
  const imported = await run(() => importCommand([writeResults(dir, 'r.json', results), '--system', 's', '--db', db]));
  expect(imported.code, imported.stderr).toBe(0);
  const text = await run(() => reportCommand(['--db', db]));
  const json = await run(() => reportCommand(['--db', db, '--json']));
  expect(json.code, json.stderr).toBe(0);
  const report = (JSON.parse(json.stdout) as { scenarios: ScenarioReport }).scenarios;
  return { text: text.stdout, cautions: report.scenarios.flatMap((s) => s.cautions.map((c) => c.message)) };
}

describe('the page-cache caution of a stored trial', () => {
  it('flags a buffered trial the engine flagged for want of device counters', async () => {
    const r = kvbenchResults({ tokPerS: 100 });
    r.kvbench.tiers.storage.direct_io = false;
    Object.assign(r.kvbench.device_io, {
      available: false, reason: 'no block device', device: null, parent_device: null, read_bytes: null, write_bytes: null, read_ios: null, write_ios: null,
      flushes: null, busy_ratio: null, avg_queue_depth: null, read_coverage: null, write_coverage: null, process_read_bytes: null, process_read_coverage: null,
      flagged: true, flag_reason: 'buffered I/O and no device counters (no block device for this filesystem): reads may have been served by the page cache',
    });
    const { text, cautions } = await reportOn(r);
    expect(cautions).toEqual(['buffered I/O and no device counters: reads may have been served by the page cache, so its storage read numbers may describe RAM']);
    expect(text).toMatch(/FLAGGED: buffered I\/O and no device counters/);
  });

  it('does not flag a direct-I/O trial the engine cleared, whatever its process count says', async () => {
    const r = kvbenchResults({ tokPerS: 100 });
    r.kvbench.tiers.storage.direct_io = true;
    r.kvbench.device_io.process_read_coverage = 0.5;
    expect(r.kvbench.device_io.flagged).toBe(false);
    const { text, cautions } = await reportOn(r);
    expect(cautions).toEqual([]);
    expect(text).not.toMatch(/FLAGGED|page cache/);
  });

  it('judges a trial stored without a verdict by the same rule: direct I/O is not blamed on the page cache', async () => {
    const r = kvbenchResults({ tokPerS: 100 });
    r.kvbench.tiers.storage.direct_io = true;
    r.kvbench.device_io.read_coverage = 0.5;
    r.kvbench.device_io.process_read_coverage = 0.5;
    delete (r.kvbench.device_io as Partial<typeof r.kvbench.device_io>).flagged;
    const { cautions } = await reportOn(r);
    expect(cautions).toEqual([
      'the device read 50.0 % of the bytes the storage tier reported reading, although direct I/O was on (a cache below the filesystem, or counters of the wrong device?), so its storage read numbers may describe RAM',
    ]);
  });
});
