// `kvbench run` loads exceljs only when an XLSX is asked for: loading it is a third of the CLI's
// start-up CPU, which engine-vs-fio counts in kvbench's CPU per GB (docs/benchmarks.md).
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** Whether importing `module` (in a fresh Node) loads any file of the exceljs package. */
function loadsExceljs(module: string): boolean {
  const script =
    `await import(${JSON.stringify(module)});` +
    "const { createRequire } = await import('node:module');" +
    "process.stdout.write(String(Object.keys(createRequire(import.meta.url).cache).some((f) => f.includes('/node_modules/exceljs/'))));";
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  return execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: REPO_ROOT, env, encoding: 'utf8' }) === 'true';
}

describe('the kvbench run command', () => {
  it('does not load exceljs at start', () => {
    expect(loadsExceljs('./src-main/engine/report/xlsx-export.ts')).toBe(true); // the check sees it when it is loaded
    expect(loadsExceljs('./src-main/cli/run-command.ts')).toBe(false);
  }, 30_000);
});
