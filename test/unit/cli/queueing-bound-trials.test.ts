// A queueing-bound trial (its open loop's queue still growing at the window's close) was flagged only in
// its results file: the store, history, report and exports showed and pooled its end-to-end latency and
// queue wait with no caution (review rev18 M2), and kvbench 0.7.0's own verdict needed 1,000 queued
// requests, so a 4-user run 238 deep read "not queueing-bound" (M3). Stored, it now carries the
// caution everywhere, judged by today's rule from its results; a database stored before gets the facts
// once, at its next read-write open (kvbench_meta keeps how far).
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { exportCommand } from '../../../src-main/cli/export-command.ts';
import { historyCommand } from '../../../src-main/cli/history-command.ts';
import { importCommand } from '../../../src-main/cli/import-command.ts';
import { reportCommand } from '../../../src-main/cli/report-command.ts';
import type { ScenarioReport } from '../../../src-main/export/report-model.ts';
import { openDatabase } from '../../../src-main/store/sqlite.ts';
import type { RunResults } from '../../../src-shared/domain/results.ts';
import { parseCsv } from '../../support/csv.ts';
import { kvbenchResults, removeTempDirs, tempDir, writeResults } from '../store/fixtures.ts';
import { runInProcess as run } from './in-process.ts';

afterEach(() => removeTempDirs());

/** A 4-user run as kvbench 0.7.0 wrote it, `queued` requests still waiting at the close, `completed` done. */
function fourUsers(queued: number, completed: number): RunResults {
  const r = kvbenchResults({ tokPerS: 100 });
  r.kvbench.version = '0.7.0';
  r.kvbench.run_options = { ...r.kvbench.run_options, numUsers: 4 };
  r.kvbench.measured_window.requests_queued_at_close = queued;
  (r as unknown as { requests_completed: number }).requests_completed = completed;
  // 0.7.0's verdict: the queue never reached 1,000 requests.
  r.kvbench.queue = { max_depth: queued, backlog_cap_requests: 500_000, backlog_cap_reached: false, queueing_bound: false, issue_lateness_max_ns: 38_871_800, note: null };
  return r;
}

const QUEUE_KEYS = "('queueing_bound', 'requests_queued_at_close', 'backlog_cap_reached')";

describe('a queueing-bound trial in the store', () => {
  it('is flagged by import, history, report, --exclude-flagged and the exports; a steady one is not', async () => {
    const dir = tempDir();
    const db = path.join(dir, 'kvbench.db');
    const imported = await run(() => importCommand([writeResults(dir, 'behind.json', fourUsers(238, 31)), writeResults(dir, 'steady.json', fourUsers(3, 1200)), '--system', 's', '--db', db]));
    expect(imported.code, imported.stderr).toBe(0);
    const lines = imported.stdout.split('\n');
    const behind = lines.findIndex((l) => /^imported .*behind\.json: trial \d+/.test(l));
    expect(lines[behind + 1]).toBe(
      "  flagged: queueing-bound (238 requests still queued at the window's close, 31 completed): the configuration offered more load than the run served, " +
        'so its end-to-end latency and queue wait measure the queue, not the storage; its storage bandwidth and per-operation latencies still describe the device',
    );
    const steady = lines.findIndex((l) => /^imported .*steady\.json: trial \d+/.test(l));
    expect(lines[steady + 1] ?? '').not.toMatch(/flagged/);

    const history = await run(() => historyCommand(['--db', db, '--json']));
    expect(history.code, history.stderr).toBe(0);
    const rows = JSON.parse(history.stdout) as { id: number; cautions: string[] }[];
    expect(rows.map((t) => t.cautions.length).sort()).toEqual([0, 1]);

    const json = await run(() => reportCommand(['--db', db, '--json']));
    const report = (JSON.parse(json.stdout) as { scenarios: ScenarioReport }).scenarios;
    // One group, both trials counted (as the other flags are), the queueing-bound one named.
    expect(report.scenarios).toHaveLength(1);
    expect(report.scenarios[0].trialIds).toHaveLength(2);
    expect(report.scenarios[0].cautions.map((c) => c.message)).toEqual([expect.stringMatching(/^queueing-bound \(238 requests still queued/)]);

    const excluding = await run(() => reportCommand(['--db', db, '--json', '--exclude-flagged']));
    const ex = (JSON.parse(excluding.stdout) as { scenarios: ScenarioReport }).scenarios;
    expect(ex.excludedFlagged).toEqual({ trials: 1, traceOnly: 0, ramBacked: 0, pageCache: 0, stalled: 0, spilled: 0, queueingBound: 1, gpuTier: 0, other: 0 });
    expect(ex.scenarios[0].excluded.map((x) => x.flags)).toEqual([['queueing-bound']]);

    const csv = path.join(dir, 'trials.csv');
    const exported = await run(() => exportCommand(['--db', db, '--out', csv]));
    expect(exported.code, exported.stderr).toBe(0);
    const [header, ...data] = parseCsv(readFileSync(csv, 'utf8').replace(/^\uFEFF/, ''));
    const col = header.indexOf('queueing_bound');
    expect(col).toBeGreaterThan(0);
    expect(data.map((r) => r[col]).sort()).toEqual(['0', '1']);
    expect(data.filter((r) => r.some((cell) => cell.startsWith('queueing-bound (238 requests still queued')))).toHaveLength(1);
  });

  it('is found in a database stored before the facts were kept, once, at its next read-write open', async () => {
    const dir = tempDir();
    const db = path.join(dir, 'kvbench.db');
    expect((await run(() => importCommand([writeResults(dir, 'behind.json', fourUsers(238, 31)), '--system', 's', '--db', db]))).code).toBe(0);
    // As kvbench 0.7.0 stored it: none of the queue's facts, no record of their fill.
    const raw = openDatabase(db);
    raw.exec(`DELETE FROM trial_metrics WHERE key IN ${QUEUE_KEYS}; DELETE FROM kvbench_meta WHERE key = 'queue_facts_filled_through'`);
    raw.close();

    const history = await run(() => historyCommand(['--db', db, '--json']));
    expect(history.code, history.stderr).toBe(0);
    expect((JSON.parse(history.stdout) as { cautions: string[] }[])[0].cautions).toEqual([expect.stringMatching(/^queueing-bound \(238 requests still queued/)]);
    const after = openDatabase(db, { readonly: true });
    try {
      expect(after.prepare(`SELECT key, value FROM trial_metrics WHERE key IN ${QUEUE_KEYS} ORDER BY key`).all()).toEqual([
        { key: 'backlog_cap_reached', value: 0 },
        { key: 'queueing_bound', value: 1 },
        { key: 'requests_queued_at_close', value: 238 },
      ]);
      expect(after.prepare("SELECT value FROM kvbench_meta WHERE key = 'queue_facts_filled_through'").get()).toEqual({ value: '1' });
    } finally {
      after.close();
    }
  });
  it("a read command's open leaves the file byte-identical after a 0.7.0 writer's trial was filled (rev18 L1)", async () => {
    const dir = tempDir();
    const db = path.join(dir, 'kvbench.db');
    const files = [1, 2, 3].map((i) => writeResults(dir, `run${i}.json`, fourUsers(238 + i, 31)));
    expect((await run(() => importCommand([...files, '--system', 's', '--db', db]))).code).toBe(0);
    // Trial 1 as a 0.7.0 process stored it beside this build's 2 and 3 (begun before them, finished
    // after): without the queue's facts, the fill's mark held back before it.
    const raw = openDatabase(db);
    raw.exec(`DELETE FROM trial_metrics WHERE trial_id = 1 AND key IN ${QUEUE_KEYS}; UPDATE kvbench_meta SET value = '0' WHERE key = 'queue_facts_filled_through'`);
    raw.close();
    // The next open fills trial 1 (a write, once).
    expect((await run(() => historyCommand(['--db', db, '--json']))).code).toBe(0);
    // An older kvbench's results without the queue's facts, imported by this build: read at its import.
    const older = fourUsers(5, 31);
    delete (older.kvbench as { queue?: unknown }).queue;
    expect((await run(() => importCommand([writeResults(dir, 'older.json', older), '--system', 's', '--db', db]))).code).toBe(0);
    const mark = (): unknown => {
      const r = openDatabase(db, { readonly: true });
      try {
        return r.prepare("SELECT value FROM kvbench_meta WHERE key = 'queue_facts_filled_through'").get();
      } finally {
        r.close();
      }
    };
    expect(mark()).toEqual({ value: '4' });
    const md5 = (): string => createHash('md5').update(readFileSync(db)).digest('hex');
    const before = md5();
    expect((await run(() => historyCommand(['--db', db, '--json']))).code).toBe(0);
    expect((await run(() => reportCommand(['--db', db, '--json']))).code).toBe(0);
    expect(md5()).toBe(before);
    expect(existsSync(`${db}-wal`) ? readFileSync(`${db}-wal`).length : 0).toBe(0);
  });
});
