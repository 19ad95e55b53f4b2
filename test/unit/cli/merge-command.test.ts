// `kvbench merge` on real files: every input's problem is reported in one go, also when one of the
// files cannot be read at all.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { mergeCommand } from '../../../src-main/cli/merge-command.ts';
import { removeTempDirs, tempDir } from '../store/fixtures.ts';
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
      '--world-size must be a positive whole number, got 0',
      expect.stringMatching(new RegExp(`^${gone} cannot be read as JSON: ENOENT`)),
      expect.stringMatching(new RegExp(`^${notRank} is not one rank of a multi-host run`)),
    ]);
  });
});
