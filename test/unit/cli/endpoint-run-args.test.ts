// `kvbench endpoint run`'s refusals of empty values: each said once, in one line naming its flag.
import { describe, expect, it } from 'vitest';
import { endpointCommand } from '../../../src-main/cli/endpoint-command.ts';
import { runInProcess } from './in-process.ts';

describe('endpoint run: an empty value (an unset shell variable)', () => {
  it('is said once as empty: not also "required", nor again by the label\'s characters rule (review rev13 #12)', async () => {
    const r = await runInProcess(() => endpointCommand(['run', '--url', '', '--model', '', '--workload', '', '--system-label', '']));
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      'kvbench endpoint run: invalid arguments:\n' +
        '  --url must not be empty\n  --model must not be empty\n  --workload must not be empty\n  --system-label must not be empty\n',
    );
  });

  it('a missing flag is still "required", and a bad label still gets the characters rule', async () => {
    const r = await runInProcess(() => endpointCommand(['run', '--url', 'http://127.0.0.1:9/v1', '--system-label', 'has space']));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('the following argument is required: --model\n');
    expect(r.stderr).toContain('the following argument is required: --workload\n');
    expect(r.stderr).toContain('--system-label may hold letters, digits and . _ : + - (starting with a letter or digit)\n');
    expect(r.stderr).not.toContain('must not be empty');
  });

  it('a label holding control characters or a bidirectional override is refused in the words every label check uses, once (not also by the characters rule)', async () => {
    const r = await runInProcess(() => endpointCommand(['run', '--url', 'http://127.0.0.1:9/v1', '--model', 'm', '--workload', 'w.json', '--system-label', 'ab\u202ec\u001b[2J']));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('  --system-label must not hold control characters, line breaks or bidirectional overrides (found U+202E, U+001B)\n');
    expect(r.stderr).not.toContain('may hold letters, digits');
  });
});
