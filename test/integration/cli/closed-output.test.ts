// `kvbench report | head`: the reader goes away after the first lines. Every command ends quietly
// there (exit 141, as a shell reports a tool a closed pipe ended), never with an EPIPE stack trace,
// and still writes the files it was asked for. Output that cannot be written at all (a full disk,
// /dev/full) is one line of error and exit 1, never a stack trace.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fillUntilFull, mountTmpfsOrSkip, unmountTmpfsMounts } from '../../support/tmpfs.ts';
import { openStore } from '../../../src-main/store/open-store.ts';
import { referenceResultsNew } from '../../unit/store/fixtures.ts';
import { extractMetrics } from '../../../src-main/store/results-ingest.ts';
import { currentProcess } from '../../../src-main/util/process-identity.ts';
import { cliEnv, explain, KVBENCH_BIN, makeTempDir, removeTempDirs, startCli, TINY_RUN_FLAGS, type CliResult } from './cli-harness.ts';

afterEach(() => {
  unmountTmpfsMounts();
  removeTempDirs();
});

/** A database whose history is far more than a pipe holds (64 KiB), so the writer meets the closed end. */
function bigDatabase(dir: string): string {
  const db = path.join(dir, 'kvbench.db');
  const store = openStore(db);
  try {
    store.atomically(() => {
      const system = store.upsertImportedSystem('lab');
      const suiteId = store.createSuite({ systemId: system.id, driveId: null, profile: 'import', label: null, source: 'import', plan: null, cacheDir: null, runner: null, status: 'finished' });
      for (let i = 0; i < 400; i++) {
        // Each its own configuration: the report has a table for each.
        const runId = store.ensureRun(suiteId, 'storage-only', 'Storage only', `k${i}`, {});
        const results = referenceResultsNew({ tokPerS: 100 + i, storageTokPerS: 50 + i });
        // As a suite's runner stores a trial: started, then finished with its results.
        const trialId = store.startTrial({
          runId, suiteId, systemId: system.id, driveId: null, hardwareSnapshotId: null, scenarioId: 'storage-only', trialIndex: 0, options: {}, configKey: `k${i}`, runner: currentProcess(), cacheDir: null,
        });
        store.finishTrial(trialId, { status: 'complete', reason: null, wallMs: null, results, resultsFormat: 'reference-new', metrics: extractMetrics(results) });
      }
    });
  } finally {
    store.close();
  }
  return db;
}

describe('a reader that goes away', () => {
  it('history, report: exit 141 without a word on stderr when the pipe closes under them', { timeout: 60_000 }, async () => {
    const tmp = makeTempDir();
    const db = bigDatabase(tmp);
    for (const args of [['history', '--json', '--limit', '0'], ['report', '--all', '--all-metrics']]) {
      const cli = startCli([...args, '--db', db], { cwd: tmp });
      // Read the first chunk, then close the read end, as `head -1` does.
      cli.child.stdout!.once('data', () => cli.child.stdout!.destroy());
      const r = await cli.done;
      expect(r.code, `${args[0]}: ${explain(r)}`).toBe(141);
      expect(r.stderr, args[0]).toBe('');
    }
  });

  // Ends after 4 completed requests, not after 2 s: on a loaded machine a 2 s window once completed
  // none, and that PARTIAL run's exit 3 hid the closed pipe's 141 this test is about.
  it('run | true: the reader gone before the summary, the results file is still written', { timeout: 90_000 }, async () => {
    const tmp = makeTempDir();
    const out = path.join(tmp, 'r.json');
    const cli = startCli(
      ['run', '--model', 'tiny-1b', '--duration', '60', '--max-requests', '4', '--num-users', '2', '--gpu-mem-gb', '0', '--cpu-mem-gb', '0', '--storage-capacity-gb', '1', '--generation-mode', 'none', '--cache-dir', tmp, '--output', out],
      { cwd: tmp },
    );
    cli.child.stdout!.destroy(); // as `| true` does: gone before anything is printed
    const r = await cli.done;
    expect(r.code, explain(r)).toBe(141);
    expect(JSON.parse(fs.readFileSync(out, 'utf8')).summary.total_requests).toBeGreaterThan(0);
  });
});

/** Runs kvbench with its stdout written into `stdoutFile` (a shell's `> FILE`), stderr captured. */
function runWithStdoutInto(args: readonly string[], stdoutFile: string, cwd: string): Promise<CliResult> {
  const startedMs = performance.now();
  const fd = fs.openSync(stdoutFile, 'w');
  const child = spawn(process.execPath, [KVBENCH_BIN, ...args], { cwd, env: cliEnv(), stdio: ['ignore', fd, 'pipe'] });
  fs.closeSync(fd);
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal, stdout: '', stderr, wallMs: performance.now() - startedMs }));
  });
}

/** One line naming the output, the cause and its code; nothing of Node's stack. */
function expectOneLineRefusal(r: CliResult, what: string, cause: RegExp): void {
  expect(r.code, `${what}: ${explain(r)}`).toBe(1);
  const lines = r.stderr.split('\n').filter((l) => l !== '');
  expect(lines, what).toHaveLength(1);
  expect(lines[0], what).toMatch(/^kvbench: cannot write the output to .* \(stdout\): /);
  expect(lines[0], what).toMatch(cause);
  expect(r.stderr, what).not.toMatch(/\n\s+at |closed-output\.ts|Node\.js v/);
}

describe('output that cannot be written', () => {
  it('history, report --json, --version into /dev/full: one line of error and exit 1, no stack trace', { timeout: 60_000 }, async () => {
    const tmp = makeTempDir();
    const db = bigDatabase(tmp);
    for (const args of [['history', '--db', db], ['report', '--all', '--json', '--db', db], ['--version']]) {
      const r = await runWithStdoutInto(args, '/dev/full', tmp);
      expectOneLineRefusal(r, args[0], /: no space is left on the device \(ENOSPC\)$/);
      expect(r.stderr, args[0]).toContain('/dev/full');
    }
  });

  it('report --json > report.json on a full disk (a real small tmpfs): says the disk is full, exit 1', { timeout: 60_000 }, async (ctx) => {
    const tmp = makeTempDir();
    const db = bigDatabase(tmp);
    const disk = path.join(tmp, 'disk');
    fs.mkdirSync(disk);
    mountTmpfsOrSkip(ctx, disk, '4m');
    fillUntilFull(path.join(disk, 'filler'));
    const out = path.join(disk, 'report.json');
    const r = await runWithStdoutInto(['report', '--all', '--json', '--db', db], out, tmp);
    expectOneLineRefusal(r, 'report', /: the disk is full \(ENOSPC\)$/);
    expect(r.stderr).toContain(out);
  });

  it('run > /dev/full: the results file is still written, and the run ends 1', { timeout: 90_000 }, async () => {
    const tmp = makeTempDir();
    const out = path.join(tmp, 'r.json');
    const r = await runWithStdoutInto(
      ['run', ...TINY_RUN_FLAGS, '--duration', '60', '--max-requests', '4', '--num-users', '2', '--cpu-mem-gb', '0', '--storage-capacity-gb', '1', '--cache-dir', tmp, '--output', out],
      '/dev/full',
      tmp,
    );
    expect(r.code, explain(r)).toBe(1);
    expect(r.stderr).toMatch(/^kvbench: cannot write the output to \/dev\/full \(stdout\): no space is left on the device \(ENOSPC\)$/m);
    expect(r.stderr).not.toMatch(/\n\s+at |Node\.js v/);
    expect(r.stderr).toContain(`Results saved to ${out}`);
    expect(JSON.parse(fs.readFileSync(out, 'utf8')).summary.total_requests).toBeGreaterThan(0);
  });
});
