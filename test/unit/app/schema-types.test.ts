// style.md: "Types come from the schemas, not written twice." A type written by hand beside the schema
// that checks the same data drifts from it without a word: TypeScript accepts the extra field a
// handler fills, and zod drops it from the answer (the reviewer's p90 added to Distribution). So in
// src-shared every type X that has a schema XSchema is inferred from it, wherever the two are declared.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const REPO = path.resolve(import.meta.dirname, '../../..');

function tsFiles(dir: string): string[] {
  return fs.readdirSync(path.join(REPO, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = path.join(dir, e.name);
    return e.isDirectory() ? tsFiles(rel) : e.name.endsWith('.ts') ? [rel] : [];
  });
}

const SHARED = tsFiles('src-shared').map((file) => ({ file, text: fs.readFileSync(path.join(REPO, file), 'utf8') }));

describe('types and their schemas', () => {
  it('in src-shared, every type with a schema is inferred from it, not written again by hand', () => {
    const schemas = new Set(SHARED.flatMap(({ text }) => [...text.matchAll(/^(?:export )?const (\w+)Schema\b/gm)].map((m) => m[1])));
    const handWritten: string[] = [];
    let inferred = 0;
    for (const { file, text } of SHARED) {
      for (const m of text.matchAll(/^(?:export )?(?:interface (\w+)\b|type (\w+)\s*=\s*([^;]*))/gm)) {
        const name = m[1] ?? m[2];
        if (!schemas.has(name)) continue;
        const rhs = m[3]?.trim();
        if (rhs !== undefined && new RegExp(`^z\\.(?:infer|output|input)<typeof ${name}Schema>$`).test(rhs)) inferred += 1;
        // Another type's name, or a constant list's members (`(typeof X)[number]`), is no second shape.
        else if (rhs !== undefined && /^(?:\w+|\(typeof \w+\)\[number\])$/.test(rhs)) continue;
        else handWritten.push(`${file}: ${name} is written by hand beside ${name}Schema`);
      }
    }
    expect(handWritten).toEqual([]);
    // The scan sees the inferred ones too (a regex that matched nothing would pass the line above).
    expect(inferred).toBeGreaterThan(10);
  });
});
