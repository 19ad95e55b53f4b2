// A kvbench bug that escapes every command's own error handling: the real bin/kvbench.js prints one
// line saying so (the stack only when asked for), not Node's stack trace of kvbench's internals.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { explain, makeTempDir, removeTempDirs, runCli } from './cli-harness.ts';

afterEach(removeTempDirs);

/**
 * A preload that swaps the command line's main module for one that throws, as a bug would: the only
 * way to reach the safety net once every known crash is a message (review rev7 #6).
 */
function buggyMainPreload(dir: string): string {
  const file = path.join(dir, 'buggy-main.mjs');
  const buggy = `data:text/javascript,${encodeURIComponent('export async function main() { throw new TypeError("cannot read properties of undefined (reading \'hdr\')"); }')}`;
  fs.writeFileSync(
    file,
    `import { registerHooks } from 'node:module';\n` +
      `registerHooks({ resolve(specifier, context, next) {\n` +
      `  if (specifier === '../src-main/cli/main.ts') return { url: ${JSON.stringify(buggy)}, shortCircuit: true };\n` +
      `  return next(specifier, context);\n` +
      `} });\n`,
  );
  return file;
}

describe('an unexpected error in kvbench', () => {
  it('prints "kvbench: internal error: <message>" and exits 1, with the stack only under --log-level DEBUG', async () => {
    const tmp = makeTempDir();
    const env = { NODE_OPTIONS: `--import=${buggyMainPreload(tmp)}` };
    const plain = await runCli(['merge', 'a.json'], { cwd: tmp, env });
    expect(plain.code, explain(plain)).toBe(1);
    expect(plain.stderr).toBe("kvbench: internal error: cannot read properties of undefined (reading 'hdr')\n");
    expect(plain.stdout).toBe('');
    const debug = await runCli(['run', '--log-level', 'DEBUG'], { cwd: tmp, env });
    expect(debug.code, explain(debug)).toBe(1);
    expect(debug.stderr).toMatch(/^kvbench: internal error: cannot read properties of undefined \(reading 'hdr'\)\nTypeError: cannot read .*\n\s+at main \(data:text\/javascript/);
  });
});
