// Which processes a kvbench started through npm watches (the real chain is in
// test/integration/cli/serve-process.test.ts): the process table here is a stand-in.
import { describe, expect, it } from 'vitest';
import { REEXEC_WRAPPER_ENV, starterGone, starterLinks } from '../../../src-main/cli/starter-gone.ts';

/** pid → [parent pid, session id]. */
function table(rows: Record<number, [number, number]>): (pid: number) => { parentPid: number; sessionId: number } | null {
  return (pid) => (rows[pid] === undefined ? null : { parentPid: rows[pid][0], sessionId: rows[pid][1] });
}

const NPX = { npm_lifecycle_event: 'npx', npm_command: 'exec' };

describe('the processes a kvbench started by npm watches', () => {
  // npm 100 → sh 200 → kvbench 300, all in session 50.
  const npmChain = table({ 100: [1, 50], 200: [100, 50], 300: [200, 50] });

  it('started by npm (npx, npm run): its own parent, npm\'s shell', () => {
    expect(starterLinks(NPX, { pid: 300, parentPid: 200 }, npmChain)).toEqual([{ pid: 300, parentPid: 200 }]);
    expect(starterLinks({ npm_lifecycle_event: 'serve' }, { pid: 300, parentPid: 200 }, npmChain)).toEqual([{ pid: 300, parentPid: 200 }]);
  });

  it('not started by npm: none (a shell, a supervisor, systemd)', () => {
    expect(starterLinks({}, { pid: 300, parentPid: 200 }, npmChain)).toBeNull();
  });

  it('in a session of its own (setsid), or already orphaned: none, whatever the environment says', () => {
    const detached = table({ 200: [100, 50], 300: [200, 300] });
    expect(starterLinks(NPX, { pid: 300, parentPid: 200 }, detached)).toBeNull();
    expect(starterLinks(NPX, { pid: 300, parentPid: 1 }, npmChain)).toBeNull();
  });

  it('without /proc (no sessions to compare): its parent is watched all the same', () => {
    expect(starterLinks(NPX, { pid: 300, parentPid: 200 }, () => null)).toEqual([{ pid: 300, parentPid: 200 }]);
  });

  it('under the re-exec wrapper: the wrapper\'s parent too, which the wrapper outlives', () => {
    // npm 100 → sh 200 → wrapper 300 → kvbench 400
    const read = table({ 200: [100, 50], 300: [200, 50], 400: [300, 50] });
    const links = starterLinks({ ...NPX, [REEXEC_WRAPPER_ENV]: '1' }, { pid: 400, parentPid: 300 }, read)!;
    expect(links).toEqual([
      { pid: 400, parentPid: 300 },
      { pid: 300, parentPid: 200 },
    ]);
    expect(starterGone(links, 300, read)).toBe(false);
    // The shell ended: the wrapper is reparented (to init, or a subreaper).
    const shellGone = table({ 300: [1, 50], 400: [300, 50] });
    expect(starterGone(links, 300, shellGone)).toBe(true);
    // The wrapper itself killed: kvbench is reparented.
    expect(starterGone(links, 1, table({ 400: [1, 50] }))).toBe(true);
  });

  it('gone once its own parent has changed', () => {
    const links = [{ pid: 300, parentPid: 200 }];
    expect(starterGone(links, 200, npmChain)).toBe(false);
    expect(starterGone(links, 1, npmChain)).toBe(true);
    expect(starterGone(links, 77, npmChain), 'a subreaper took it').toBe(true);
  });
});
