/** Just enough CSV for trace files: comma-separated fields, RFC 4180 quoting within one line. */

/** The fields of one CSV line, or a description of what is wrong with it. */
export function splitCsvLine(line: string): { ok: true; fields: string[] } | { ok: false; error: string } {
  const fields: string[] = [];
  let i = 0;
  for (;;) {
    if (line.charCodeAt(i) === 0x22 /* " */) {
      let value = '';
      i++;
      for (;;) {
        const q = line.indexOf('"', i);
        if (q < 0) return { ok: false, error: 'unterminated quoted field (a field spanning lines is not supported)' };
        value += line.slice(i, q);
        if (line.charCodeAt(q + 1) === 0x22) {
          value += '"';
          i = q + 2;
          continue;
        }
        i = q + 1;
        break;
      }
      fields.push(value);
      if (i === line.length) return { ok: true, fields };
      if (line[i] !== ',') return { ok: false, error: `unexpected character after a quoted field at column ${i + 1}` };
      i++;
    } else {
      const c = line.indexOf(',', i);
      if (c < 0) {
        fields.push(line.slice(i));
        return { ok: true, fields };
      }
      fields.push(line.slice(i, c));
      i = c + 1;
    }
  }
}

const DECIMAL_RE = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/** A finite decimal number, or null (no hex, no "Infinity", no empty string — unlike Number()). */
export function parseDecimal(text: string): number | null {
  const s = text.trim();
  if (!DECIMAL_RE.test(s)) return null;
  const v = Number(s);
  return Number.isFinite(v) ? v : null;
}

/** A token count: a non-negative integer ("12" or "12.0"), or null. */
export function parseTokenCount(text: string): number | null {
  const v = parseDecimal(text);
  return v !== null && v >= 0 && Number.isSafeInteger(v) ? v : null;
}

/** Maps required column names to their positions in a header line; lists what is missing. */
export function columnIndex(header: string[], required: readonly string[]): { ok: true; index: Map<string, number> } | { ok: false; missing: string[] } {
  const names = header.map((h) => h.trim());
  const index = new Map<string, number>();
  const missing: string[] = [];
  for (const r of required) {
    const i = names.indexOf(r);
    if (i < 0) missing.push(r);
    else index.set(r, i);
  }
  return missing.length > 0 ? { ok: false, missing } : { ok: true, index };
}
