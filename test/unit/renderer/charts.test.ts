import { describe, expect, it } from 'vitest';
import { distinctLabels, fitLabel, fitLabels } from '../../../src-renderer/charts.ts';

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

describe('fitLabels (a bar chart\'s labels, each cut to its axis, told apart)', () => {
  const place = 'Storage only · lab-nvme-a · Samsung PM9A3 7.68TB (nvme0n1)';
  const fits = (labels: readonly string[], maxPx: number): void => {
    for (const l of labels) expect(mono(l), l).toBeLessThanOrEqual(maxPx);
  };

  it('cuts labels at their end, as fitLabel, where that tells them apart, and keeps those that fit whole', () => {
    const labels = ['Storage only', `${place} · label “fw 2.1”`, `CPU only · lab-nvme-b · Micron 7450 PRO 3.84TB (nvme1n1) · label “fw 2.1”`];
    expect(fitLabels(labels, 140, mono)).toEqual(labels.map((l) => fitLabel(l, 140, mono)));
    expect(fitLabels(labels, 140, mono)).toEqual(['Storage only', 'Storage only · lab-…', 'CPU only · lab-nvme…']);
  });

  it('keeps the start and the end where labels differ only at the end of a long shared start (two suite labels)', () => {
    const labels = [`${place} · label “fw-GDC5902Q_xfs-noatime_qd32”`, `${place} · label “fw-GDC5902Q_xfs-noatime_qd64”`];
    const fitted = fitLabels(labels, 140, mono);
    expect(fitted).toEqual(['Storage only ·…qd32”', 'Storage only ·…qd64”']);
    fits(fitted, 140);
  });

  it('keeps the word where they part ("nvme1n1", not "1n1"), and as much of the start as fits', () => {
    const labels = ['Storage only · lab-nvme-a · Samsung PM9A3 7.68TB (nvme0n1)', 'Storage only · lab-nvme-a · Samsung PM9A3 7.68TB (nvme1n1)'];
    const fitted = fitLabels(labels, 210, mono);
    expect(fitted).toEqual(['Storage only · lab-nv…nvme0n1)', 'Storage only · lab-nv…nvme1n1)']);
    fits(fitted, 210);
  });

  it('tells apart labels that part in the middle of a long shared start and end, cutting that part at its end too', () => {
    const labels = ['A', 'B'].map((x) => `${'L'.repeat(100)}${x}${'X'.repeat(100)}`);
    const fitted = fitLabels(labels, 140, mono);
    expect(new Set(fitted).size).toBe(2);
    fits(fitted, 140);
    expect(fitted[0]).toMatch(/^L+…L*AX*…$/);
    expect(fitted[1]).toMatch(/^L+…L*BX*…$/);
  });

  it('tells apart three labels, two of which share more than the third', () => {
    const labels = [`${place} · label “run-a-1”`, `${place} · label “run-a-2”`, `${place} · label “run-b-1”`];
    const fitted = fitLabels(labels, 140, mono);
    expect(new Set(fitted).size).toBe(3);
    fits(fitted, 140);
  });

  it('tells apart a cut label and a longer one it starts', () => {
    const labels = [place, `${place} · label “fw 2.1”`];
    const fitted = fitLabels(labels, 140, mono);
    expect(new Set(fitted).size).toBe(2);
    fits(fitted, 140);
  });

  it('numbers, after their start, labels still alike that part in two places beyond what one cut keeps', () => {
    const [h, t] = ['h'.repeat(30), 't'.repeat(30)];
    const fitted = fitLabels([h + h, h + h + t, h + t], 140, mono);
    expect(fitted).toEqual(['hhhhhhhhhhh…hhhhhhhh', 'hhhhhhhhhhhhhhh… (1)', 'hhhhhhhhhhhhhhh… (2)']);
  });

  it('leaves labels that are the same alike (there is nothing to tell apart)', () => {
    expect(fitLabels([place, place], 140, mono)).toEqual([fitLabel(place, 140, mono), fitLabel(place, 140, mono)]);
  });

  it('gives every label of a set sharing long starts a text of its own that fits (many generated sets)', () => {
    // A fixed-seed generator: labels built of a few shared parts, so that many share long starts.
    let seed = 42;
    const next = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const parts = [place, ' · ', 'label “', 'fw-GDC5902Q', '_xfs-noatime', '_qd32', '_qd64', '”', 'LLLLLLLLLLLLLLLLLLLL', '😀', ' ', 'x'];
    for (let round = 0; round < 300; round++) {
      const labels = [...new Set(Array.from({ length: 2 + next(5) }, () => Array.from({ length: 2 + next(6) }, () => parts[next(parts.length)]).join('')))];
      const maxPx = 7 * (14 + next(30));
      const fitted = fitLabels(labels, maxPx, mono);
      expect(new Set(fitted).size, JSON.stringify({ labels, maxPx, fitted })).toBe(labels.length);
      fits(fitted, maxPx);
    }
  });
});

describe('labels of rows that share a name', () => {
  it('adds what sets each apart, leaves a name no other row has as it is, and numbers rows alike in every part', () => {
    const labels = ['Storage only', 'CPU only', 'CPU only', 'CPU only', 'GPU only', 'GPU only'];
    const parts = [['CPU 0.5 GiB', '50 users'], ['CPU 1 GiB', '4 users', '5s'], ['CPU 2 GiB', '4 users', '5s'], ['CPU 2 GiB', '8 users', '5s'], ['GPU 2 GiB'], ['GPU 2 GiB']];
    expect(distinctLabels(labels, parts)).toEqual(['Storage only', 'CPU only · CPU 1 GiB, 4 users', 'CPU only · CPU 2 GiB, 4 users', 'CPU only · CPU 2 GiB, 8 users', 'GPU only (1)', 'GPU only (2)']);
    expect(distinctLabels(['a', 'b'], [['x'], ['x']])).toEqual(['a', 'b']);
  });
});
