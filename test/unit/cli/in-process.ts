// Runs a kvbench command function in this process, as the CLI would, with its output captured.
import { vi } from 'vitest';

/** The command's exit code and what it wrote to stdout and stderr (neither reaches the test's output). */
export async function runInProcess(fn: () => Promise<number>): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((s: string | Uint8Array) => ((stderr += String(s)), true));
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((s: string | Uint8Array) => ((stdout += String(s)), true));
  try {
    return { code: await fn(), stdout, stderr };
  } finally {
    err.mockRestore();
    out.mockRestore();
  }
}
