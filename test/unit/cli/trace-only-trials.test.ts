// A trial run in trace-only mode (--io-trace-log) did no storage I/O: its bandwidths are logical and
// its latencies 0. Imported into a real database (as kvbench 0.6.0 wrote such a file: a storage PASS
// made of 0.00 ms), `kvbench import`, `history` and `report` must say it measured nothing, and
// --exclude-flagged leaves it out (review rev12 M2).
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { historyCommand } from '../../../src-main/cli/history-command.ts';
import { importCommand } from '../../../src-main/cli/import-command.ts';
import { reportCommand } from '../../../src-main/cli/report-command.ts';
import type { ScenarioReport } from '../../../src-main/export/report-model.ts';
import type { RunResults } from '../../../src-shared/domain/results.ts';
import { kvbenchResults, removeTempDirs, tempDir, writeResults } from '../store/fixtures.ts';
import { runInProcess as run } from './in-process.ts';

afterEach(() => removeTempDirs());

/** A trace-only run's results as the engine wrote them before it withheld the storage verdict. */
function traceOnlyResults(): RunResults {
  const r = kvbenchResults({ tokPerS: 270 });
  r.kvbench.run_options = { ...r.kvbench.run_options, ioTraceLog: '/var/tmp/trace.csv' };
  r.kvbench.tiers.storage.direct_io = false;
  r.kvbench.tiers.storage.direct_io_reason = 'trace-only mode (--io-trace-log): no storage I/O at all';
  r.kvbench.tiers.storage.reads_may_hit_page_cache = true;
  Object.assign(r.kvbench.device_io, {
    available: false, reason: 'trace-only mode: no storage I/O', device: null, parent_device: null, read_bytes: null, write_bytes: null, read_ios: null, write_ios: null,
    flushes: null, busy_ratio: null, avg_queue_depth: null, read_coverage: null, write_coverage: null, process_read_bytes: null, process_read_coverage: null,
    flagged: false, flag_reason: null,
  });
  r.summary!.cache_stats.storage_health = {
    overall_status: 'PASS',
    criteria: [
      { name: 'Storage Tier Write Device P95 < 500ms', target: 500, actual: 0, unit: 'ms', passed: true },
      { name: 'Storage Tier Read Device P95 < 200ms', target: 200, actual: 0, unit: 'ms', passed: true },
    ],
    passed_count: 2,
    total_count: 2,
    note: 'kvbench tool criteria (the reference tool’s thresholds), not an MLPerf rule',
  };
  return r;
}

describe('a trial stored from a trace-only run', () => {
  it('is flagged as no measurement by import, history and report, and --exclude-flagged leaves it out', async () => {
    const dir = tempDir();
    const db = path.join(dir, 'kvbench.db');
    const imported = await run(() => importCommand([writeResults(dir, 'trace.json', traceOnlyResults()), writeResults(dir, 'measured.json', kvbenchResults({ tokPerS: 100 })), '--system', 's', '--db', db]));
    expect(imported.code, imported.stderr).toBe(0);
    const lines = imported.stdout.split('\n');
    const traceLine = lines.findIndex((l) => /^imported .*trace\.json: trial \d+, kvbench, complete/.test(l));
    expect(traceLine).toBeGreaterThanOrEqual(0);
    expect(lines[traceLine + 1]).toMatch(/^ {2}flagged: trace-only mode \(--io-trace-log\): no storage I\/O happened/);
    // The measured trial carries no flag, so nothing follows its line.
    const measuredLine = lines.findIndex((l) => /^imported .*measured\.json: trial \d+/.test(l));
    expect(lines[measuredLine + 1]).not.toMatch(/flagged/);

    const history = await run(() => historyCommand(['--db', db]));
    expect(history.code, history.stderr).toBe(0);
    expect(history.stdout).toMatch(/trace-only mode: no storage I\/O/);

    const json = await run(() => reportCommand(['--db', db, '--json']));
    expect(json.code, json.stderr).toBe(0);
    const report = (JSON.parse(json.stdout) as { scenarios: ScenarioReport }).scenarios;
    // Its own configuration group ("trace only"), never pooled with the measured trial …
    const traceGroup = report.scenarios.find((s) => s.configDescription.includes('trace only'))!;
    const measuredGroup = report.scenarios.find((s) => !s.configDescription.includes('trace only'))!;
    expect(measuredGroup.cautions).toEqual([]);
    // … and flagged for what it is.
    expect(traceGroup.cautions.map((c) => c.message)).toEqual([
      'trace-only mode (--io-trace-log): no storage I/O happened, so its storage bandwidths and byte rates are logical (what the run would have moved) and its storage latencies are 0 by construction: not a measurement of any drive',
    ]);
    const text = await run(() => reportCommand(['--db', db]));
    expect(text.stdout).toMatch(/FLAGGED: trace-only mode \(--io-trace-log\)/);

    const excluding = await run(() => reportCommand(['--db', db, '--json', '--exclude-flagged']));
    expect(excluding.code, excluding.stderr).toBe(0);
    const ex = (JSON.parse(excluding.stdout) as { scenarios: ScenarioReport }).scenarios;
    expect(ex.excludedFlagged).toEqual({ trials: 1, traceOnly: 1, ramBacked: 0, pageCache: 0, stalled: 0, spilled: 0, queueingBound: 0, gpuTier: 0, other: 0 });
    const left = ex.scenarios.find((s) => s.configDescription.includes('trace only'))!;
    expect(left.trialIds).toEqual([]);
    expect(left.excluded.map((x) => x.flags)).toEqual([['trace-only']]);
    const exText = await run(() => reportCommand(['--db', db, '--exclude-flagged']));
    expect(exText.stdout).toContain('1 trial(s) left out (1 in trace-only mode (no storage I/O)), each listed with why.');
  });
});
