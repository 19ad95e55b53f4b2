// A write into a device or pipe that fails (`export --out /dev/full`) is said in the words a failed
// stdout is said in (`> /dev/full`): "no space is left on the device (ENOSPC)", not Node's raw
// "ENOSPC: no space left on device, write", a third wording.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { outputFailedText } from '../../../src-main/cli/closed-output.ts';
import { main } from '../../../src-main/cli/main.ts';
import { exportCommand } from '../../../src-main/cli/export-command.ts';
import { importCommand } from '../../../src-main/cli/import-command.ts';
import { writeFileAtomic } from '../../../src-main/util/write-file-atomic.ts';
import { kvbenchResults, removeTempDirs, tempDir, writeResults } from '../store/fixtures.ts';
import { runInProcess as run } from './in-process.ts';

afterEach(removeTempDirs);

describe('a device that cannot be written (/dev/full)', () => {
  it.skipIf(!fs.existsSync('/dev/full'))('export --out /dev/full says why as a failed stdout says it', async () => {
    await expect(writeFileAtomic('/dev/full', 'x')).rejects.toThrow(/^no space is left on the device \(ENOSPC\)$/);
    const dir = tempDir();
    const db = path.join(dir, 'kvbench.db');
    const imported = await run(() => importCommand([writeResults(dir, 'r1.json', kvbenchResults({ tokPerS: 100 })), '--system', 'lab', '--db', db]));
    expect(imported.code, imported.stderr).toBe(0);
    const r = await run(() => exportCommand(['--out', '/dev/full', '--format', 'csv', '--db', db]));
    expect(r).toEqual({ code: 1, stdout: '', stderr: 'kvbench export failed (EXPORT_FAILED): could not write /dev/full: no space is left on the device (ENOSPC)\n' });
    const enospc = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    expect(outputFailedText('stdout', -1, enospc)).toBe('kvbench: cannot write the output (stdout): no space is left on the device (ENOSPC)\n');
  });
});

describe('kvbench --help', () => {
  it("names export's report CSV beside its trials files", async () => {
    const r = await run(() => main(['--help']));
    expect(r.stdout).toMatch(/^ {2}kvbench export +trials to CSV, XLSX or JSON; the report's table as CSV \(--content report\)$/m);
  });
});
