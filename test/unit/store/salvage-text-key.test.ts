// salvageRows walks each table by its integer key; a table keyed by text (WITHOUT ROWID, as
// kvbench_meta is) has no such walk. Copying one once looped without end, its list of lost ranges
// growing until memory ran out (13 GB before it was stopped).
import { describe, expect, it } from 'vitest';
import { salvageRows } from '../../../src-main/store/salvage.ts';
import { openDatabase } from '../../../src-main/store/sqlite.ts';

const TEXT_KEYED = 'CREATE TABLE notes (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID';

describe('salvageRows over a table keyed by text', () => {
  it('copies its rows and ends, where it once looped without end', () => {
    const src = openDatabase(':memory:');
    const dst = openDatabase(':memory:');
    for (const db of [src, dst]) db.exec(TEXT_KEYED);
    const put = src.prepare('INSERT INTO notes (key, value) VALUES (?, ?)');
    for (const [k, v] of [['b', '2'], ['a', '1'], ['c', '3']]) put.run(k, v);

    const salvage = salvageRows(src, dst, 'k.db');

    expect(dst.prepare('SELECT key, value FROM notes ORDER BY key').all()).toEqual([
      { key: 'a', value: '1' },
      { key: 'b', value: '2' },
      { key: 'c', value: '3' },
    ]);
    expect(salvage.notes).toEqual([]);
  });
});
