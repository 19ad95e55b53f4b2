import { describe, expect, it } from 'vitest';
import { shownAtLogLevel } from '../../../src-main/cli/log-level.ts';

describe('shownAtLogLevel', () => {
  it('ranks the levels as Python logging does; errors always show', () => {
    const shown = (chosen: 'DEBUG' | 'INFO' | 'WARNING' | 'ERROR' | 'CRITICAL') =>
      (['debug', 'info', 'warn', 'error'] as const).filter((m) => shownAtLogLevel(m, chosen));
    expect(shown('DEBUG')).toEqual(['debug', 'info', 'warn', 'error']);
    expect(shown('INFO')).toEqual(['info', 'warn', 'error']);
    expect(shown('WARNING')).toEqual(['warn', 'error']);
    expect(shown('ERROR')).toEqual(['error']);
    expect(shown('CRITICAL')).toEqual(['error']);
  });
});
