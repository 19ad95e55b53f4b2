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

  it('exclusive: writes a new file, and never replaces an existing one (EEXIST, the old contents kept, no temporary left)', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'rescue.json');
    await writeFileAtomic(file, 'first', { exclusive: true });
    expect(fs.readFileSync(file, 'utf8')).toBe('first');
    await expect(writeFileAtomic(file, 'second', { exclusive: true })).rejects.toMatchObject({ code: 'EEXIST' });
    expect(fs.readFileSync(file, 'utf8')).toBe('first');
    expect(fs.readdirSync(dir)).toEqual(['rescue.json']);
  });
});
