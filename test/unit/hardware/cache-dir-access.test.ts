// A cache directory that cannot be used is said for what it is: a file, a read-only file system, a
// directory this user may not write — not "not writable" for a file, nor ENOENT from a recursive
// mkdir under a read-only mount.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { suiteCommand } from '../../../src-main/cli/suite-command.ts';
import { hardwareAdvice } from '../../../src-main/hardware/advice.ts';
import { cacheDirRefusal } from '../../../src-main/hardware/cache-dir-access.ts';
import { detectHardware } from '../../../src-main/hardware/detect-hardware.ts';
import { formatHardware } from '../../../src-main/hardware/format-hardware.ts';
import { planSuite } from '../../../src-main/suite/planner.ts';
import { runInProcess } from '../cli/in-process.ts';
import { giveTo, runModuleAs, sourceUrl, unprivilegedOrSkip } from '../../support/unprivileged.ts';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kvb-cache-access-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('cacheDirRefusal', () => {
  it('a writable directory, existing or to be created in one, is fine', () => {
    expect(cacheDirRefusal(tmp)).toBeNull();
    expect(cacheDirRefusal(path.join(tmp, 'new', 'deeper'))).toBeNull();
  });

  it('a file given as the directory, or as the ancestor it would be created in, is a file', () => {
    const file = path.join(tmp, 'afile');
    fs.writeFileSync(file, '');
    expect(cacheDirRefusal(file)).toEqual({ kind: 'not-a-directory', message: `${file} is a file: the cache directory must be a directory (one that does not exist yet is created)` });
    expect(cacheDirRefusal(path.join(file, 'sub'))).toEqual({ kind: 'not-a-directory', message: `${file} is a file, so the cache directory ${path.join(file, 'sub')} cannot be created in it` });
  });

  it('a directory this user may not write (as nobody when the tests run as root: root writes anywhere)', (ctx) => {
    const user = unprivilegedOrSkip(ctx);
    const locked = path.join(tmp, 'locked');
    fs.mkdirSync(locked, { mode: 0o555 });
    fs.chmodSync(tmp, 0o755); // mkdtemp's 0700 would refuse nobody the way in, not the write
    giveTo(user, locked); // its own directory, and still not writable: mode 555
    const refusal = runModuleAs(user, `import { cacheDirRefusal } from '${sourceUrl('src-main/hardware/cache-dir-access.ts')}'; console.log(JSON.stringify(cacheDirRefusal(process.argv[1])));`, [path.join(locked, 'kv')]);
    expect(refusal).toEqual({ kind: 'denied', message: `${locked} is not writable by this user, so the cache directory ${path.join(locked, 'kv')} cannot be created in it` });
  });

  it('a file given as --cache-dir: hw, the advice and the plan say it is a file', async () => {
    const file = path.join(tmp, 'afile2');
    fs.writeFileSync(file, '');
    const hw = await detectHardware(file, { probeDirectIo: true, cudaProbe: false });
    expect(hw.cacheDir).toMatchObject({ writable: false, notWritableReason: expect.stringMatching(/ is a file: the cache directory must be a directory/) });
    expect(formatHardware(hw)).toMatch(/\(NOT writable: .*afile2 is a file/);
    expect(hw.warnings).toContain(`cache dir: ${file} is a file: the cache directory must be a directory (one that does not exist yet is created); direct I/O not probed`);
    expect(hardwareAdvice(hw, false).find((a) => a.code === 'not-writable')?.message).toMatch(/^The cache directory cannot be used: .*afile2 is a file/);
    const plan = planSuite(hw, { profile: 'smoke', cacheDir: file });
    expect(plan.estimate.problems).toContain(`the cache directory cannot be used: ${file} is a file: the cache directory must be a directory (one that does not exist yet is created)`);
  });

  it('a directory under a read-only mount: said read-only by hw, the plan and the suite, never ENOENT (root only)', async (ctx) => {
    const src = path.join(tmp, 'ro-src');
    const ro = path.join(tmp, 'ro');
    fs.mkdirSync(src);
    fs.mkdirSync(ro);
    try {
      execFileSync('mount', ['--bind', src, ro], { stdio: 'pipe' });
    } catch (err) {
      return ctx.skip(`cannot bind-mount here (${(err as Error).message.split('\n')[0]})`);
    }
    try {
      execFileSync('mount', ['-o', 'remount,bind,ro', ro], { stdio: 'pipe' });
      const sub = path.join(ro, 'sub');
      const said = `${ro} is on a read-only file system, so the cache directory ${sub} cannot be created in it`;
      expect(cacheDirRefusal(sub)).toEqual({ kind: 'read-only', message: said });
      const hw = await detectHardware(sub, { probeDirectIo: false, cudaProbe: false });
      expect(planSuite(hw, { profile: 'smoke', cacheDir: sub }).estimate.problems).toContain(`the cache directory cannot be used: ${said}`);
      // The real run, planned before or after it creates the directory: either way it says read-only.
      const r = await runInProcess(() => suiteCommand(['--profile', 'smoke', '--no-probe', '--cache-dir', sub, '--db', path.join(tmp, 'k.db')]));
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(said);
      expect(r.stderr).not.toMatch(/ENOENT/);
    } finally {
      execFileSync('umount', [ro], { stdio: 'pipe' });
    }
  });
});
