import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

const helper = new URL('../../../src-main/engine/tiers/gpu/process-exit.ts', import.meta.url).href;

/** Runs `body` in a fresh Node process with `onProcessExit` imported and a cleanup that prints "cleaned". */
function run(body: string) {
  const script = `
    import fs from 'node:fs';
    import { onProcessExit } from ${JSON.stringify(helper)};
    const dispose = onProcessExit(() => fs.writeSync(1, 'cleaned\\n'));
    ${body}
  `;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20_000 });
  return { stdout: r.stdout, status: r.status, signal: r.signal, stderr: r.stderr };
}

describe('onProcessExit', () => {
  it('runs the cleanup on process.exit', () => {
    expect(run('process.exit(3);')).toMatchObject({ stdout: 'cleaned\n', status: 3 });
  });

  it('runs the cleanup when an uncaught exception ends the process', () => {
    const r = run("setTimeout(() => { throw new Error('crash'); }, 1);");
    expect(r.stdout).toBe('cleaned\n');
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/crash/);
  });

  it('runs the cleanup on a signal nobody handles, and the signal still terminates the process', () => {
    const r = run("setTimeout(() => process.kill(process.pid, 'SIGTERM'), 1); setTimeout(() => {}, 10_000);");
    expect(r).toMatchObject({ stdout: 'cleaned\n', signal: 'SIGTERM' });
  });

  it('leaves a signal the program handles to the program, and cleans up when it exits', () => {
    const r = run(`
      process.on('SIGTERM', () => { fs.writeSync(1, 'handled\\n'); setTimeout(() => process.exit(143), 20); });
      setTimeout(() => process.kill(process.pid, 'SIGTERM'), 1);
      setTimeout(() => {}, 10_000);
    `);
    expect(r).toMatchObject({ stdout: 'handled\ncleaned\n', status: 143 });
  });

  it('does nothing once disposed (the normal close path)', () => {
    expect(run('dispose(); process.exit(0);')).toMatchObject({ stdout: '', status: 0 });
  });
});
