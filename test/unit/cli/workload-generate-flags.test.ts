// `kvbench workload generate` reads its numbers as the reference's argparse flags do (Python's int()
// and float()), not as JavaScript's Number(): '0x10' or '1e3' for a count was a silent 16 or 1000 there,
// and an argparse error here. A refused value writes nothing.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { workloadCommand } from '../../../src-main/cli/workload-command.ts';
import { removeTempDirs, tempDir } from '../sources/helpers.ts';
import { runInProcess } from './in-process.ts';

afterEach(removeTempDirs);

const BASE = ['--contexts', '1024', '--batches-per-context', '2', '--batch-sizes', '2', '--prompt-pool-size', '4', '--reuse-start-batch', '1'];

/** The base command line with `flag value` replacing (or adding) that flag's value. */
function argsWith(flag: string, value: string, out: string): string[] {
  const args = [...BASE];
  const at = args.indexOf(flag);
  if (at >= 0) args.splice(at, 2);
  return ['generate', ...args, flag, value, '--out', out];
}

describe('kvbench workload generate: numeric flags', () => {
  const invalid = (type: string, value: string): string => `invalid ${type} value: '${value}'`;
  const outOfRange = (value: string, limit: string): string => `'${value}' is out of range (beyond ${limit})`;
  it.each([
    // Number() read these as numbers; Python's int() and float() refuse them.
    ['--seed', '0x10', invalid('int', '0x10')],
    ['--seed', '0b1', invalid('int', '0b1')],
    ['--contexts', '1e3', invalid('int', '1e3')],
    ['--batch-sizes', '8.0', invalid('int', '8.0')],
    ['--prompt-pool-size', '.5e1', invalid('int', '.5e1')],
    ['--delay-ms', '0x10', invalid('float', '0x10')],
    // Refused before and still: nothing, blanks, no number at all.
    ['--batches-per-context', '', invalid('int', '')],
    ['--reuse-start-batch', ' ', invalid('int', ' ')],
    ['--generation-tokens', 'ten', invalid('int', 'ten')],
    // Python's float() reads these; an endless delay or a NaN ratio is no workload (see the parser).
    ['--delay-ms', 'inf', invalid('float', 'inf')],
    ['--delay-ms', 'Infinity', invalid('float', 'Infinity')],
    ['--reuse-ratio', 'nan', invalid('float', 'nan')],
    // Spelled right, but past what a number holds: out of range, as Python's range check would say, not an invalid spelling.
    ['--delay-ms', '1e400', outOfRange('1e400', '±1.8e308')],
    // An integer past 2^53 cannot be held exactly.
    ['--seed', '9007199254740993', outOfRange('9007199254740993', '±9007199254740991')],
    ['--contexts', '-99999999999999999999', outOfRange('-99999999999999999999', '±9007199254740991')],
  ])('refuses %s %j with argparse\'s message, exit code 1, and leaves the file alone', async (flag, value, said) => {
    const dir = tempDir();
    const out = path.join(dir, 'workload.json');
    fs.writeFileSync(out, 'an earlier workload\n');
    const r = await runInProcess(() => workloadCommand(argsWith(flag, value, out)));
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`kvbench workload generate: invalid arguments:\n  argument ${flag}: ${said}\n`);
    expect(r.stdout).toBe('');
    expect(fs.readFileSync(out, 'utf8')).toBe('an earlier workload\n');
    expect(fs.readdirSync(dir)).toEqual(['workload.json']);
  });

  it('names every bad value of a list flag, and writes no file where there was none', async () => {
    const out = path.join(tempDir(), 'sub', 'workload.json');
    const r = await runInProcess(() => workloadCommand(['generate', '--contexts', '1024', '0x800', '2048', '1k', '--out', out]));
    expect(r.code).toBe(1);
    expect(r.stderr).toBe("kvbench workload generate: invalid arguments:\n  argument --contexts: invalid int value: '0x800'\n  argument --contexts: invalid int value: '1k'\n");
    expect(fs.existsSync(path.dirname(out))).toBe(false);
  });

  it('range errors still come from the schema, in the reference\'s words', async () => {
    const out = path.join(tempDir(), 'workload.json');
    const r = await runInProcess(() => workloadCommand(argsWith('--batch-sizes', '0', out)));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('--batch-sizes must be positive');
    expect(fs.existsSync(out)).toBe(false);
  });

  it('takes what Python\'s int() and float() take: blanks around, a sign, _ between digits, exponents for floats', async () => {
    const dir = tempDir();
    const out = path.join(dir, 'workload.json');
    const r = await runInProcess(() =>
      workloadCommand([
        'generate',
        '--contexts', ' 1024 ', '+2_048',
        '--batches-per-context', '2',
        '--batch-sizes', '2', '0_3',
        '--prompt-pool-size', '4',
        '--reuse-start-batch', '1',
        '--reuse-ratio', ' .25',
        '--delay-ms', '1e1',
        '--generation-tokens', '1_6',
        '--seed=+7',
        '--out', out,
      ]),
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const file = JSON.parse(fs.readFileSync(out, 'utf8')) as { generator: { params: Record<string, unknown> } };
    expect(file.generator.params).toMatchObject({
      contexts: [1024, 2048],
      batch_sizes: [2, 3],
      reuse_ratio: 0.25,
      delay_ms: 10,
      generation_tokens: 16,
      seed: 7,
    });
  });
});
