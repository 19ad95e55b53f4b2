// `kvbench merge` on real files: every input's problem is reported in one go, also when one of the
// files cannot be read at all.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { mergeCommand } from '../../../src-main/cli/merge-command.ts';
import { KVBENCH_VERSION } from '../../../src-shared/domain/version.ts';
import { kvbenchResults, removeTempDirs, tempDir } from '../store/fixtures.ts';
import { runInProcess as run } from './in-process.ts';

afterEach(removeTempDirs);

describe('kvbench merge', () => {
  it('reports the problems of the files it could read beside the ones it could not', async () => {
    const dir = tempDir('kvb-merge-');
    const notRank = path.join(dir, 'plain.json');
    fs.writeFileSync(notRank, JSON.stringify({ kvbench: { version: '0.2.0', rank: null } }));
    const gone = path.join(dir, 'gone.json');
    const r = await run(() => mergeCommand([notRank, gone, '--world-size', '0']));
    expect(r.code).toBe(1);
    const lines = r.stderr.split('\n');
    expect(lines[0]).toBe('kvbench merge: refused:');
    expect(lines.slice(1).map((l) => l.trim()).filter((l) => l.length > 0)).toEqual([
      "--world-size takes a whole number ≥ 1, got '0'",
      expect.stringMatching(new RegExp(`^${gone} cannot be read as JSON: ENOENT`)),
      expect.stringMatching(new RegExp(`^${notRank} is not one rank of a multi-host run`)),
    ]);
  });

  it('refuses a rank whose histogram is damaged, naming the file, instead of crashing', async () => {
    // review rev7 #6: "Error: Invalid string. Length must be a multiple of 4" and a stack trace.
    const dir = tempDir('kvb-merge-');
    const rank = (n: number, hdr?: string): string => {
      const r = kvbenchResults({ tokPerS: 10 });
      r.kvbench.rank = { rank: n, world_size: 2, host: `h${n}` };
      r.kvbench.run_options = { model: 'tiny-1b', numUsers: 4, duration: 60, cpuMemGb: 0, gpuMemGb: 0, seed: 42 + n, rank: n, worldSize: 2, cacheDir: `/shared/rank-${n}` };
      if (hdr !== undefined) r.kvbench.latency.end_to_end.hdr = hdr;
      const file = path.join(dir, `rank${n}.json`);
      fs.writeFileSync(file, JSON.stringify(r));
      return file;
    };
    const r = await run(() => mergeCommand([rank(0), rank(1, 'abc')]));
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      `kvbench merge: refused:\n  ${path.join(dir, 'rank1.json')}: the end_to_end latency histogram (kvbench.latency.end_to_end.hdr) cannot be decoded ` +
        "(Invalid string. Length must be a multiple of 4): the file is damaged; copy it from the rank's host again, or run the rank again\n",
    );
  });

  it("says which kvbench measured the ranks, and which merged them, in the summary and the file", async () => {
    // review rev13 #5: ranks of 0.4.0 merged with no word of their version, the file stamped with the merger's.
    const dir = tempDir('kvb-merge-');
    const rank = (n: number): string => {
      const r = kvbenchResults({ tokPerS: 10 });
      r.kvbench.version = '0.4.0';
      r.kvbench.rank = { rank: n, world_size: 2, host: `h${n}` };
      r.kvbench.run_options = { model: 'tiny-1b', numUsers: 4, duration: 60, cpuMemGb: 0, gpuMemGb: 0, seed: 42 + n, rank: n, worldSize: 2, cacheDir: `/shared/rank-${n}` };
      const file = path.join(dir, `rank${n}.json`);
      fs.writeFileSync(file, JSON.stringify(r));
      return file;
    };
    const output = path.join(dir, 'merged.json');
    const r = await run(() => mergeCommand([rank(0), rank(1), '--output', output]));
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[1]).toBe(`Ranks measured by kvbench 0.4.0 (merged by kvbench ${KVBENCH_VERSION})`);
    expect(r.stdout).toMatch(/Note: the ranks were measured by kvbench 0\.4\.0, and their merge keeps that version's definitions/);
    const written = JSON.parse(fs.readFileSync(output, 'utf8')) as { kvbench_merge: { version: string; merged_by_version: string; ranks: { version: string }[] } };
    expect(written.kvbench_merge).toMatchObject({ version: '0.4.0', merged_by_version: KVBENCH_VERSION, ranks: [{ version: '0.4.0' }, { version: '0.4.0' }] });
  });
});
