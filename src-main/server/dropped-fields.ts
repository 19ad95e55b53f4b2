// What a response schema's parse left out of an answer. zod's objects drop the keys they don't
// name, and TypeScript lets a handler return more than its type says (a spread, a wider object), so
// a field a handler fills but the contract lacks reaches no page and nothing fails. The backend
// names every such field: a handler narrows an answer on purpose itself, so what this finds is drift.

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The paths (`run.aggregates.p90`, `trials[].note`) of keys that `raw` has and `parsed` lacks, each
 * once. Keys whose value is undefined don't count: JSON would not carry them either.
 */
export function droppedFields(raw: unknown, parsed: unknown, at = ''): string[] {
  const out = new Set<string>();
  if (Array.isArray(raw) && Array.isArray(parsed)) {
    for (let i = 0; i < Math.min(raw.length, parsed.length); i++) for (const p of droppedFields(raw[i], parsed[i], `${at}[]`)) out.add(p);
  } else if (isRecord(raw) && isRecord(parsed)) {
    for (const [k, v] of Object.entries(raw)) {
      const path = at === '' ? k : `${at}.${k}`;
      if (!(k in parsed)) {
        if (v !== undefined) out.add(path);
      } else {
        for (const p of droppedFields(v, parsed[k], path)) out.add(p);
      }
    }
  }
  return [...out];
}
