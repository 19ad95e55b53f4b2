// What the store's tests share: stores a test opens, closed after it, and a StoreError expected by
// its code and message.
import { expect } from 'vitest';
import { openStore } from '../../src-main/store/open-store.ts';
import { StoreError } from '../../src-main/store/store-error.ts';
import type { Store } from '../../src-main/store/store.ts';

const opened: Store[] = [];

/** openStore, the store closed by closeOpenedStores (the test file's afterEach, before its temp dirs go). */
export function open(file: string, opts: Parameters<typeof openStore>[1] = {}): Store {
  const s = openStore(file, opts);
  opened.push(s);
  return s;
}

/** Closes every store open() opened since the last call. */
export function closeOpenedStores(): void {
  for (const s of opened.splice(0)) s.close();
}

/** `fn` throws a StoreError with this code, and this message (a string: all of it; a pattern: matching it). */
export function expectStoreError(fn: () => unknown, code: string, message: string | RegExp): void {
  let thrown: unknown = null;
  try {
    fn();
  } catch (err) {
    thrown = err;
  }
  expect(thrown, `expected a StoreError ${code}`).toBeInstanceOf(StoreError);
  const e = thrown as StoreError;
  expect({ code: e.code, message: e.message }).toEqual({ code, message: typeof message === 'string' ? message : expect.stringMatching(message) });
}
