import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { keepInFirstWritable } from '../../../src-main/util/keep-file.ts';
import { writeFileAtomic } from '../../../src-main/util/write-file-atomic.ts';

const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'kvb-keep-'));
  made.push(d);
  return d;
}
const writeText = (text: string) => (file: string) => writeFileAtomic(file, text);

describe('keepInFirstWritable', () => {
  it('never replaces a file: a taken name becomes stem-2.ext, stem-3.ext …', async () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'r.json'), 'old 1');
    fs.writeFileSync(path.join(dir, 'r-2.json'), 'old 2');

    const kept = await keepInFirstWritable([dir], 'r.json', writeText('new'));

    expect(kept).toEqual({ path: path.join(dir, 'r-3.json'), failures: [] });
    expect(fs.readFileSync(path.join(dir, 'r.json'), 'utf8')).toBe('old 1');
    expect(fs.readFileSync(path.join(dir, 'r-2.json'), 'utf8')).toBe('old 2');
    expect(fs.readFileSync(kept.path!, 'utf8')).toBe('new');
  });

  it('goes on to the next directory past one that is missing, and past a write that fails, leaving nothing there', async () => {
    const missing = path.join(tempDir(), 'gone');
    const failing = tempDir();
    const good = tempDir();
    let calls = 0;
    const kept = await keepInFirstWritable([missing, failing, good], 'r.json', async (file) => {
      calls++;
      if (path.dirname(file) === failing) throw new Error('the disk is full');
      await writeFileAtomic(file, 'kept');
    });

    expect(kept.path).toBe(path.join(good, 'r.json'));
    expect(fs.readFileSync(kept.path!, 'utf8')).toBe('kept');
    expect(calls).toBe(2);
    expect(kept.failures).toHaveLength(2);
    expect(kept.failures[0]).toMatch(new RegExp(`^${missing}: .*ENOENT`));
    expect(kept.failures[1]).toBe(`${failing}: the disk is full`);
    expect(fs.readdirSync(failing), 'the claimed name is removed again').toEqual([]);
  });

  it('creates a place marked create (with its missing parents), and removes what it created when the file cannot be written there', async () => {
    const base = tempDir();
    const refused = path.join(base, 'a', 'rescue');
    const taken = path.join(base, 'b', 'rescue');
    const kept = await keepInFirstWritable([{ dir: refused, create: true }, { dir: taken, create: true }], 'r.json', async (file) => {
      if (path.dirname(file) === refused) throw new Error('the disk is full');
      await writeFileAtomic(file, 'kept');
    });

    expect(kept).toEqual({ path: path.join(taken, 'r.json'), failures: [`${refused}: the disk is full`] });
    expect(fs.readdirSync(base).sort(), 'no empty folder left where the write failed').toEqual(['b']);
    expect(fs.readFileSync(kept.path!, 'utf8')).toBe('kept');
  });

  it('leaves a place marked create alone when it existed, also when the write fails', async () => {
    const dir = tempDir();
    const kept = await keepInFirstWritable([{ dir, create: true }], 'r.json', () => Promise.reject(new Error('the disk is full')));
    expect(kept.path).toBeNull();
    expect(fs.existsSync(dir)).toBe(true);
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('says so when no directory takes the file', async () => {
    const a = path.join(tempDir(), 'a');
    const kept = await keepInFirstWritable([a, a], 'r.json', writeText('x'));
    expect(kept.path).toBeNull();
    expect(kept.failures, 'each directory once').toHaveLength(1);
  });
});
