// The backend names an answer's fields that its contract schema would drop (backend.ts invoke), so
// a field added to a handler's answer and not to the contract is seen, not lost on the way to the page.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { droppedFields } from '../../../src-main/server/dropped-fields.ts';

describe('droppedFields', () => {
  const schema = z.object({
    run: z.object({ id: z.number(), aggregates: z.object({ ttftMs: z.object({ p50: z.number().nullable() }) }) }),
    rows: z.array(z.object({ key: z.string() })),
    metrics: z.record(z.string(), z.number()),
  });

  it('names each key a parse left out, by its path, once for all rows of an array', () => {
    const raw = {
      run: { id: 1, aggregates: { ttftMs: { p50: 2, p90: 3 } }, extra: 'x' },
      rows: [{ key: 'a', note: 'n' }, { key: 'b', note: 'm' }],
      metrics: { a: 1, b: 2 },
      top: true,
    };
    expect(droppedFields(raw, schema.parse(raw)).sort()).toEqual(['rows[].note', 'run.aggregates.ttftMs.p90', 'run.extra', 'top']);
  });

  it('finds nothing in an answer the schema carries whole (records keep every key; undefined is no field)', () => {
    const raw = { run: { id: 1, aggregates: { ttftMs: { p50: null } } }, rows: [], metrics: { a: 1 }, nothing: undefined };
    expect(droppedFields(raw, schema.parse(raw))).toEqual([]);
    expect(droppedFields([1, 'a', null], [1, 'a', null])).toEqual([]);
  });
});
