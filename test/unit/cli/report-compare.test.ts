// `kvbench report --compare A B --drives` on a real database of imported drives: what it refuses,
// and the notes, marks and counts it prints beside the ratios.
import { afterEach, describe, expect, it } from 'vitest';
import { reportCommand } from '../../../src-main/cli/report-command.ts';
import { openStore } from '../../../src-main/store/open-store.ts';
import { removeTempDirs, tempDir } from '../store/fixtures.ts';
import { dbIn, importDrive } from '../export/drive-imports.ts';
import { runInProcess } from './in-process.ts';

afterEach(removeTempDirs);

describe('kvbench report --compare', () => {
  it('refuses a drive compared with itself, and names the listing that shows the drives', async () => {
    const dir = tempDir();
    const store = openStore(dbIn(dir));
    try {
      await importDrive(store, dir, 'A-first', [{ tokPerS: 100 }, { tokPerS: 101 }]);
    } finally {
      store.close();
    }
    const report = (...args: string[]) => runInProcess(() => reportCommand([...args, '--db', dbIn(dir)]));
    // Two refs to one drive used to run and print "≈ noise" on every metric, as if two drives had been measured.
    const self = await report('--compare', 'A-first', 'A-first', '--drives');
    expect(self.code).toBe(1);
    expect(self.stdout).toBe('');
    expect(self.stderr).toMatch(/^kvbench report: A and B are the same drive \(A-first, imp-drv-[0-9a-f]+\): compare two different drives\n$/);
    const byId = await report('--compare', 'A-first', 'imp-drv', '--drives');
    expect(byId.code).toBe(1);
    expect(byId.stderr).toContain('A and B are the same drive');
    // `kvbench history --drives` does not exist: the drives are listed by --systems.
    const unknown = await report('--compare', 'nosuch', 'A-first', '--drives');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe("kvbench report: no drive matches 'nosuch' (see kvbench history --systems)\n");
  });
});
