import { describe, expect, it } from 'vitest';
import { fitLabel } from '../../../src-renderer/charts.ts';

/** A monospace measure: 7 px a character. */
const mono = (text: string): number => Array.from(text).length * 7;

describe('fitLabel (a bar chart label cut to its axis)', () => {
  it('keeps a label that fits whole', () => {
    expect(fitLabel('Storage only · vm', 200, mono)).toBe('Storage only · vm');
    expect(fitLabel('abc', 21, mono)).toBe('abc');
  });

  it('cuts a longer label at its end, with "…", to the widest start that fits', () => {
    const label = `Storage only · vm · virtual disk vda (256 GiB) · label "${'L'.repeat(100)}"`;
    const fitted = fitLabel(label, 140, mono);
    expect(fitted).toBe('Storage only · vm ·…');
    expect(mono(fitted)).toBeLessThanOrEqual(140);
    expect(fitLabel('abcdef', 35, mono)).toBe('abcd…');
  });

  it('drops the spaces before the "…" and never splits a character made of two code units', () => {
    expect(fitLabel('ab    cdefgh', 49, mono)).toBe('ab…');
    expect(fitLabel('😀😀😀😀', 21, mono)).toBe('😀😀…');
  });

  it('gives "…" alone when not even one character fits', () => {
    expect(fitLabel('abcdef', 3, mono)).toBe('…');
  });
});
