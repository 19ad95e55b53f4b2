// A path someone gave (a dataset, `run --output`, `export --out`, `--db`, `--config`) is quoted in
// messages escaped, as labels and refused values are: a file name may hold a newline (a fake line in
// the terminal), an ESC sequence (which drives it) or a bidirectional override (which reverses what
// follows). Linux allows all three in a name. s12 left them raw in these messages.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { KvbenchError } from '../../../src-shared/domain/errors.ts';
import { createWorkloadSource } from '../../../src-main/engine/workload/sources/create-source.ts';
import { parseRunArgs } from '../../../src-main/engine/config/parse-run-args.ts';
import { exportCommand } from '../../../src-main/cli/export-command.ts';
import { endpointCommand } from '../../../src-main/cli/endpoint-command.ts';
import { makeCtx, removeTempDirs, tempDir } from '../sources/helpers.ts';

afterEach(() => {
  vi.restoreAllMocks();
  removeTempDirs();
});

/** A name with a newline, a screen-clearing ESC sequence and a right-to-left override. */
const HOSTILE = 'a\nb\u001b[2J\u202eevil';
const HOSTILE_SHOWN = 'a\\u{a}b\\u{1b}[2J\\u{202e}evil';
const RAW = /[\n\u001b\u202e]/;

/** What a command wrote to stderr, its exit code beside it. */
async function stderrOf(run: () => Promise<number>): Promise<{ code: number; text: string }> {
  const written: string[] = [];
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    written.push(String(chunk));
    return true;
  });
  const code = await run();
  vi.restoreAllMocks();
  return { code, text: written.join('') };
}

/** `text` without the line breaks that end its lines: what is left must hold no raw control. */
const body = (text: string): string => text.replace(/\n$/, '').replaceAll(/\n(?=kvbench|  |usage)/g, ' ');

describe('paths in messages are escaped', () => {
  it('the workload readers: a bad file, a missing one, and a parser quoting the file', async () => {
    const dir = tempDir();
    const bad = path.join(dir, `${HOSTILE}.json`);
    fs.writeFileSync(bad, 'not a trace at all\n');
    const missing = path.join(dir, `${HOSTILE}-missing.jsonl`);
    // A Mooncake line whose JSON breaks after an ESC: V8's message quotes the text around it.
    const mooncake = path.join(dir, `${HOSTILE}.jsonl`);
    fs.writeFileSync(mooncake, `{"timestamp": 0, "input_length": 10, "output_length": 5, "hash_ids": [1]}\n{"timestamp": x\u001b[31m}\n`);
    const refusal = async (file: string): Promise<string> => {
      try {
        await createWorkloadSource(makeCtx({ datasetPath: file }));
      } catch (err) {
        expect(err).toBeInstanceOf(KvbenchError);
        return (err as Error).message;
      }
      throw new Error('accepted');
    };
    for (const file of [bad, missing, mooncake]) {
      const message = await refusal(file);
      expect(message, message).not.toMatch(RAW);
      expect(message).toContain(path.join(dir.replaceAll('\n', '\\u{a}'), HOSTILE_SHOWN));
    }
    expect(await refusal(mooncake)).toMatch(/line 2: not valid JSON .*\\u\{1b\}\[31m/);
  });

  it('run: --output, --cache-dir and --config named in the refusal escaped', () => {
    const dir = tempDir();
    const r = parseRunArgs(
      ['--model', 'tiny-1b', '--output', path.join(dir, HOSTILE, 'r.json'), '--config', path.join(dir, `${HOSTILE}.yaml`), '--xlsx-output', `${HOSTILE}.csv`],
      { cwd: dir },
    );
    expect(r.ok).toBe(false);
    const errors = r.ok ? [] : r.errors;
    for (const e of errors) expect(e, e).not.toMatch(RAW);
    expect(errors.join('\n')).toContain(`Config file not found: ${dir}/${HOSTILE_SHOWN}.yaml`);
    // As `kvbench run` parses them: checked against this machine, the output's folder too.
    const output = parseRunArgs(['--model', 'tiny-1b', '--output', path.join(dir, HOSTILE, 'r.json')], { cwd: dir, runsHere: { totalMemoryBytes: 64 * 2 ** 30 } });
    const outErrors = output.ok ? [] : output.errors;
    expect(outErrors).toEqual([`--output: cannot write ${dir}/${HOSTILE_SHOWN}/r.json: its folder ${dir}/${HOSTILE_SHOWN} does not exist`]);
  });

  it('export --out and endpoint export --out: the refusal names the file escaped; so does a missing --db', async () => {
    const dir = tempDir();
    const out = path.join(dir, HOSTILE, 'trials.csv');
    const db = path.join(dir, 'kvbench.db');
    const exp = await stderrOf(() => exportCommand(['--db', db, '--out', out]));
    expect(exp.code).toBe(1);
    expect(body(exp.text)).not.toMatch(RAW);
    expect(exp.text).toBe(`kvbench export: cannot write --out ${dir}/${HOSTILE_SHOWN}/trials.csv: its folder ${dir}/${HOSTILE_SHOWN} does not exist\n`);

    const ep = await stderrOf(() => endpointCommand(['export', '--db', db, '--out', out]));
    expect(ep.code).not.toBe(0);
    expect(body(ep.text)).not.toMatch(RAW);
    expect(ep.text).toContain(`cannot write --out ${dir}/${HOSTILE_SHOWN}/trials.csv: its folder ${dir}/${HOSTILE_SHOWN} does not exist`);

    const noDb = await stderrOf(() => exportCommand(['--db', path.join(dir, `${HOSTILE}.db`), '--out', path.join(dir, 'x.csv')]));
    expect(noDb.code).not.toBe(0);
    expect(body(noDb.text)).not.toMatch(RAW);
    expect(noDb.text).toContain(`no database at ${dir}/${HOSTILE_SHOWN}.db`);
  });
});
