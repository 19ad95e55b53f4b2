// The commands kvbench suggests paste into a POSIX shell as the very text they name: a suite label
// (any text up to 200 characters) with quotes, `$`, backticks, backslashes or a newline in it reaches
// kvbench as given, and nothing in it is expanded or run. Checked through a real sh.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { labelsVerdictText } from '../../../src-shared/domain/places.ts';
import { shellQuote } from '../../../src-shared/domain/shell-quote.ts';

/** The arguments `sh` gives the command line `kvbench ARGS`: printf stands in for kvbench. */
function argsAfterPaste(commandLine: string): string[] {
  expect(commandLine.startsWith('kvbench ')).toBe(true);
  const out = execFileSync('sh', ['-c', `printf '%s\\0' ${commandLine.slice('kvbench '.length)}`], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/home/someone' } });
  return out.split('\0').slice(0, -1);
}

const AWKWARD = ['fw "2.1" $HOME', "it's `date` \\n", 'two\nlines', '$(touch /tmp/kvbench-pwned)', "''", 'fw2.1', ''];

describe('commands kvbench suggests', () => {
  it('the verdict between two labels: the command pastes into sh with each label as the very text', () => {
    for (const [a, b] of [['fw "2.1" $HOME', 'fw 2.2'], ...AWKWARD.map((x, i) => [x, AWKWARD[(i + 1) % AWKWARD.length]!])] as [string, string][]) {
      const note = labelsVerdictText([{ label: a }, { label: null }, { label: b }]);
      const prefix = 'for a verdict between two labels: ';
      expect(note.startsWith(prefix)).toBe(true);
      expect(argsAfterPaste(note.slice(prefix.length))).toEqual(['report', '--compare', a, b, '--labels']);
    }
    expect(labelsVerdictText([{ label: 'fw "2.1" $HOME' }, { label: 'fw 2.2' }])).toBe(`for a verdict between two labels: kvbench report --compare 'fw "2.1" $HOME' 'fw 2.2' --labels`);
  });

  it('shellQuote leaves a plain word as it is and quotes anything else for a POSIX shell', () => {
    expect(shellQuote('/var/lib/kvbench/kvbench.db')).toBe('/var/lib/kvbench/kvbench.db');
    expect(shellQuote("it's")).toBe(`'it'\\''s'`);
    for (const x of AWKWARD) expect(argsAfterPaste(`kvbench ${shellQuote(x)}`)).toEqual([x]);
  });
});
