// Every command's numeric flags, through the real kvbench command: a value that is not a number as
// people type one (empty, blank, hex, a fraction where a whole number belongs) is refused naming the
// flag, before anything is opened or measured. Number() alone read '' and ' ' as 0 and '0x1' as 1,
// so `history --limit ''` meant "no limit" and `report --suite 0x1` reported suite 1 (review rev7 #11).
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { explain, makeTempDir, removeTempDirs, runCli } from './cli-harness.ts';

let tmp = '';
beforeAll(() => {
  tmp = makeTempDir();
});
afterAll(removeTempDirs);

/** A command line with the flag's value as the last word, and what the refusal must say. */
interface Row {
  args: (value: string) => string[];
  refusal: (value: string) => string;
}

const db = (): string => path.join(tmp, 'kvbench.db');
const wholeNumber = (flag: string, range: string) => (v: string) => `${flag} takes a whole number ${range}, got '${v}'`;
/** A list flag: an empty value is no list (it was read as "no filter"), a bad item is named as one number. */
const wholeNumbers = (flag: string, range: string) => (v: string) => (v.trim() === '' ? `${flag} takes whole numbers (comma-separated), got '${v}'` : `${flag} takes a whole number ${range}, got '${v}'`);

const ROWS: Record<string, Row> = {
  'history --limit': { args: (v) => ['history', '--db', db(), '--limit', v], refusal: wholeNumber('--limit', '≥ 0') },
  'history --suite': { args: (v) => ['history', '--db', db(), '--suite', v], refusal: wholeNumbers('--suite', '≥ 1') },
  'report --suite': { args: (v) => ['report', '--db', db(), '--suite', v], refusal: wholeNumbers('--suite', '≥ 1') },
  'report --stated-read-gbps': {
    args: (v) => ['report', '--db', db(), '--all', '--stated-read-gbps', v],
    refusal: (v) => `--stated-read-gbps takes a positive number of GB/s (10^9 bytes/s), got '${v}'`,
  },
  'export --suite': { args: (v) => ['export', '--db', db(), '--out', path.join(tmp, 'x.json'), '--suite', v], refusal: wholeNumbers('--suite', '≥ 1') },
  'endpoint list --limit': { args: (v) => ['endpoint', 'list', '--db', db(), '--limit', v], refusal: wholeNumber('--limit', '≥ 1') },
  'endpoint show ID': { args: (v) => ['endpoint', 'show', '--db', db(), v], refusal: () => 'give one run id' },
  'endpoint delete ID': { args: (v) => ['endpoint', 'delete', '--db', db(), v], refusal: () => 'give one run id' },
  'endpoint run --max-tokens': { args: (v) => ['endpoint', 'run', '--db', db(), '--max-tokens', v], refusal: (v) => `--max-tokens takes a whole number, got '${v}'` },
  'endpoint run --temperature': { args: (v) => ['endpoint', 'run', '--db', db(), '--temperature', v], refusal: (v) => `--temperature takes a number, got '${v}'` },
  'hw --probe-seconds': { args: (v) => ['hw', '--cache-dir', tmp, '--probe-seconds', v], refusal: (v) => `--probe-seconds takes a number > 0 and ≤ 600, got '${v}'` },
  'serve --port': { args: (v) => ['serve', '--db', db(), '--port', v], refusal: wholeNumber('--port', 'from 0 to 65535') },
  'merge --world-size': { args: (v) => ['merge', path.join(tmp, 'rank0.json'), '--world-size', v], refusal: wholeNumber('--world-size', '≥ 1') },
  'suite --resume': { args: (v) => ['suite', '--db', db(), '--resume', v], refusal: wholeNumber('--resume', '≥ 1') },
  'suite --trials': { args: (v) => ['suite', '--db', db(), '--plan', '--cache-dir', tmp, '--trials', v], refusal: (v) => `--trials takes a number, got '${v}'` },
  'probe --duration': { args: (v) => ['probe', '--dir', tmp, '--duration', v], refusal: (v) => `--duration takes a number, got '${v}'` },
};

describe('numeric flags of every command', () => {
  // '' and ' ' were 0, '0x1' was 1; '1.5' was taken where ids and counts are whole.
  const values: Record<string, readonly string[]> = {
    'endpoint show ID': ['0x1', '1.5'],
    'endpoint delete ID': ['0x1', ' '],
    'endpoint run --temperature': ['', '0x1'],
    'probe --duration': [' ', '0x1'],
    'suite --trials': ['', '0x1'],
    'report --stated-read-gbps': ['', '0x10'],
    'hw --probe-seconds': [' ', '0x1'],
  };
  it.each(Object.keys(ROWS))('%s refuses what is not a number as typed, naming the flag', async (name) => {
    const row = ROWS[name];
    for (const value of values[name] ?? ['', '0x1', '1.5']) {
      const r = await runCli(row.args(value), { cwd: tmp, env: { KVBENCH_DB: db() } });
      expect(r.code, `${name} '${value}': ${explain(r)}`).toBe(1);
      expect(r.stderr, `${name} '${value}'`).toContain(row.refusal(value));
      expect(r.stderr).not.toMatch(/^\s+at .+:\d+:\d+\)?$/m);
    }
    // Nothing was opened or created for a refused command: no database, no export, no results.
    expect(fs.readdirSync(tmp)).toEqual([]);
  });
});
