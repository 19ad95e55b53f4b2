// What an ordinary user is refused can only be seen by one: root passes every permission check. When
// the tests run as root (CI does), these checks run in a child process as `nobody`; otherwise as this
// (already unprivileged) user.
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { TestContext } from 'vitest';
import { skipBecause } from './skip.ts';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The ids to run as: `nobody`'s when this process is root, null when it is not root itself. */
export interface RunAs {
  uid: number;
  gid: number;
}

function nobody(): RunAs | string {
  let passwd: string;
  try {
    passwd = fs.readFileSync('/etc/passwd', 'utf8');
  } catch (err) {
    return `cannot read /etc/passwd (${(err as Error).message})`;
  }
  const line = passwd.split('\n').find((l) => l.startsWith('nobody:'));
  if (!line) return 'there is no user nobody in /etc/passwd';
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

/**
 * Who runs an unprivileged check: null when this process is not root (it is unprivileged already),
 * `nobody` when it is root; the test is skipped, saying why, where root cannot hand over to nobody
 * (no such user, not Linux, or a checkout nobody may not read).
 */
export function unprivilegedOrSkip(ctx: TestContext): RunAs | null {
  if (process.getuid?.() !== 0) return null;
  if (process.platform !== 'linux') skipBecause(ctx, `root on ${process.platform}: cannot run the check as an unprivileged user`);
  const user = nobody();
  if (typeof user === 'string') return skipBecause(ctx, `running as root, and ${user}: the unprivileged case cannot be run`);
  const probe = spawnSync(process.execPath, ['-e', 'require("node:fs").accessSync(process.argv[1], require("node:fs").constants.R_OK)', `${REPO_ROOT}src-main/store/open-store.ts`], { ...user, encoding: 'utf8' });
  if (probe.status !== 0) {
    return skipBecause(ctx, `running as root, and nobody cannot run Node on this checkout (${(probe.error?.message ?? probe.stderr).trim().split('\n')[0]}): the unprivileged case cannot be run`);
  }
  return user;
}

/** Hands `paths` to the user a check runs as (nothing to do when that is this process's user). */
export function giveTo(user: RunAs | null, ...paths: string[]): void {
  if (user) for (const p of paths) fs.chownSync(p, user.uid, user.gid);
}

/**
 * Runs `source` (an ES module; `process.argv.slice(1)` holds `args`) in a child Node, as `user` when
 * given, and returns what it printed as JSON on its last stdout line. The child imports this
 * checkout's sources by file URL (Node 24 runs them as they are).
 */
export function runModuleAs(user: RunAs | null, source: string, args: readonly string[] = []): unknown {
  const r: SpawnSyncReturns<string> = spawnSync(process.execPath, ['--input-type=module', '-e', source, '--', ...args], {
    ...(user ?? {}),
    cwd: '/',
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
  });
  if (r.status !== 0) throw new Error(`child exited ${r.status ?? r.signal}:\n${r.stderr}`);
  const last = r.stdout.trim().split('\n').at(-1) ?? '';
  return JSON.parse(last) as unknown;
}

/** The file URL of a source file of this checkout, for a child's `import`. */
export function sourceUrl(relative: string): string {
  return new URL(relative, new URL(`file://${REPO_ROOT}`)).href;
}
