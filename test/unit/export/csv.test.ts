import { describe, expect, it } from 'vitest';
import { CSV_BOM, csvCell, csvTable } from '../../../src-main/export/csv.ts';

describe('CSV cells', () => {
  it('defuses text a spreadsheet would run as a formula, and leaves numbers alone', () => {
    expect(csvCell('=1+1')).toBe("'=1+1");
    expect(csvCell('+1')).toBe("'+1");
    expect(csvCell('-1')).toBe("'-1");
    expect(csvCell('@A1')).toBe("'@A1");
    expect(csvCell('\tx')).toBe("'\tx");
    expect(csvCell('\rx')).toBe(`"'\rx"`);
    expect(csvCell('=A1,"B"')).toBe(`"'=A1,""B"""`);
    expect(csvCell(-1.5)).toBe('-1.5');
    expect(csvCell(Number.NaN)).toBe('');
    expect(csvCell(false)).toBe('false');
    expect(csvCell(null)).toBe('');
    expect(csvCell(undefined)).toBe('');
    expect(csvCell('a = b')).toBe('a = b');
    expect(csvCell(' padded')).toBe('" padded"');
  });

  it('a table starts with the UTF-8 BOM and ends every line with CRLF', () => {
    expect(csvTable(['a', 'b'], [[1, 'x…'], [null, '=x']])).toBe(`${CSV_BOM}a,b\r\n1,x…\r\n,'=x\r\n`);
  });
});
