// `kvbench endpoint compare --runs-a/--runs-b` take run ids: whole positive numbers, read by the same
// flag parser as every other numeric flag, so `0x5` or `1e1` is refused instead of meaning run 5 or 10.
import { afterEach, describe, expect, it } from 'vitest';
import { endpointCommand } from '../../../src-main/cli/endpoint-command.ts';
import { removeTempDirs } from '../store/fixtures.ts';
import { runInProcess } from './in-process.ts';

afterEach(removeTempDirs);

describe('endpoint compare run ids', () => {
  it.each(['0x5', '1e1', '2.0', '0', '-3', '4,x'])('refuses --runs-a %s before opening any database', async (ids) => {
    const r = await runInProcess(() => endpointCommand(['compare', 'a', 'b', `--runs-a=${ids}`, '--db', '/nonexistent/kvbench.db']));
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/^kvbench endpoint: compare: --runs-a /);
    expect(r.stderr).not.toMatch(/no database/);
  });

  it('reads a valid list and goes on to the database', async () => {
    const r = await runInProcess(() => endpointCommand(['compare', 'a', 'b', '--runs-a', '1,2', '--runs-b', ' 3 ', '--db', '/nonexistent/kvbench.db']));
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/no database at \/nonexistent\/kvbench\.db/);
  });
});
