// `kvbench app` / `npm run app`: the launcher's refusals come before Electron is started.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { appCommand, rootRefusal } from '../../../src-main/app/launch-electron.ts';

const REPO = path.resolve(import.meta.dirname, '../../..');

afterEach(() => {
  vi.restoreAllMocks();
});

function captureStderr(): string[] {
  const written: string[] = [];
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    written.push(String(chunk));
    return true;
  });
  return written;
}

describe('kvbench app', () => {
  it('as root, says to run as a normal user or use kvbench serve, and starts nothing', async () => {
    const stderr = captureStderr();
    expect(await appCommand([], { uid: 0 })).toBe(1);
    const text = stderr.join('');
    expect(text).toMatch(/does not start as root/);
    expect(text).toMatch(/as a normal user/);
    expect(text).toMatch(/kvbench serve/);
  });

  it('refuses a --db without a value before anything else, with the usage', async () => {
    const stderr = captureStderr();
    expect(await appCommand(['--db'], { uid: 1000 })).toBe(1);
    expect(stderr.join('')).toMatch(/^kvbench app: --db needs a value: the database file\n\nUsage: kvbench app \[--db PATH\]/);
  });

  it('never adds --no-sandbox; a root user who passes it is not stopped here', () => {
    expect(rootRefusal([], 0)).not.toBeNull();
    expect(rootRefusal(['--no-sandbox'], 0)).toBeNull();
    expect(rootRefusal([], 1000)).toBeNull();
    expect(rootRefusal([], undefined)).toBeNull(); // no uids (Windows)
  });

  it('npm run app goes through the launcher, so it says the same', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts.app).toMatch(/bin\/kvbench\.js app$/);
  });
});
