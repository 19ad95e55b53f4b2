// A test that does not run says so, on the console and in the report: one that quietly returns, or
// is skipped without a word, reads like a pass of a claim nobody checked.
import type { TestContext } from 'vitest';

/** Skips the running test with `why` as its note, after printing it. */
export function skipBecause(ctx: TestContext, why: string): never {
  console.warn(`skipped: ${why}`);
  return ctx.skip(why);
}

/** For `describe.skipIf` / `it.skipIf`: `condition`, with `why` printed when it holds. */
export function skippedBecause(condition: boolean, why: string): boolean {
  if (condition) console.warn(`skipped: ${why}`);
  return condition;
}
