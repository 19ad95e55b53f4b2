import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { writeFileAtomic } from '../../../src-main/util/write-file-atomic.ts';
import { removeTempDirs, tempDir } from '../store/fixtures.ts';

afterEach(() => removeTempDirs());

describe('writeFileAtomic', () => {
  it('replaces an existing file, leaving no temporary behind', async () => {
    const file = path.join(tempDir(), 'out.json');
    fs.writeFileSync(file, 'old');
    await writeFileAtomic(file, 'new');
    expect(fs.readFileSync(file, 'utf8')).toBe('new');
    expect(fs.readdirSync(path.dirname(file))).toEqual(['out.json']);
  });
});
