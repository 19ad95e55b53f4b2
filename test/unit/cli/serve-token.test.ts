// `kvbench serve` refuses a token that is too short, naming where it came from: the --token flag, or
// KVBENCH_SERVE_TOKEN when the environment gave it (a message about --token sent users looking for a
// flag they never typed).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { serveCommand } from '../../../src-main/cli/serve-command.ts';
import { runInProcess } from './in-process.ts';

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('kvbench serve token', () => {
  it('names KVBENCH_SERVE_TOKEN or --token, whichever gave the bad token, and starts nothing', async () => {
    vi.stubEnv('KVBENCH_SERVE_TOKEN', 'zz');
    const fromEnv = await runInProcess(() => serveCommand(['--port', '0']));
    expect(fromEnv.code).toBe(1);
    expect(fromEnv.stderr).toMatch(/^kvbench serve: KVBENCH_SERVE_TOKEN must be at least 32 hexadecimal digits/);
    expect(fromEnv.stderr).not.toMatch(/--token/);
    expect(fromEnv.stdout).toBe('');

    // --token wins over the environment, and is named when it is the bad one.
    const fromFlag = await runInProcess(() => serveCommand(['--port', '0', '--token', 'abc']));
    expect(fromFlag.code).toBe(1);
    expect(fromFlag.stderr).toMatch(/^kvbench serve: --token must be at least 32 hexadecimal digits/);
  });
});
