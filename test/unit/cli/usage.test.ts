// Every command's usage text: filled in (no template placeholder left as text) and naming the flags
// the command accepts, so --help never hides one.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const CLI_DIR = path.join(import.meta.dirname, '../../../src-main/cli');

describe('command usage texts', () => {
  it('have no unfilled ${…} placeholder', async () => {
    const files = fs.readdirSync(CLI_DIR).filter((f) => f.endsWith('-command.ts'));
    let texts = 0;
    for (const f of files) {
      const mod = (await import(path.join(CLI_DIR, f))) as Record<string, unknown>;
      for (const [name, value] of Object.entries(mod)) {
        if (!name.endsWith('USAGE') || typeof value !== 'string') continue;
        texts++;
        expect(value, `${f} ${name}`).not.toMatch(/\$\{/);
      }
    }
    expect(texts).toBeGreaterThanOrEqual(9);
  });

  it('report and export name the stated-bandwidth flags they accept', async () => {
    const { REPORT_USAGE } = await import('../../../src-main/cli/report-command.ts');
    const { EXPORT_USAGE } = await import('../../../src-main/cli/export-command.ts');
    for (const usage of [REPORT_USAGE, EXPORT_USAGE]) {
      expect(usage).toMatch(/^ {2}--stated-read-gbps X +the drive's read bandwidth/m);
      // The results' *_gbps keys are GiB/s: a value copied from them would be 7 % off.
      expect(usage).toMatch(/GB\/s = 10\^9 B\/s\n +\(not GiB\/s, the unit of the results' \*_gbps keys\)/);
      expect(usage).toMatch(/^ {2}--stated-write-gbps X +the same for writes/m);
    }
  });
});
