import { describe, expect, it } from 'vitest';
import { wrapText } from '../../../src-main/cli/help-text.ts';

describe('wrapText', () => {
  it('breaks at spaces within the width, indents every line, and gives a longer word a line of its own', () => {
    expect(wrapText('one two three  four', 9, '  ')).toBe('  one two\n  three\n  four\n');
    expect(wrapText('a /a/very/long/path b', 6, '')).toBe('a\n/a/very/long/path\nb\n');
    expect(wrapText('', 10, '  ')).toBe('');
  });
});
