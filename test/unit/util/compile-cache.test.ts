// The compile-cache helper bin/kvbench.js and the engine's entry share: never a reason not to start.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileCacheDirectory, enableCompileCache } from '../../../src-main/util/compile-cache.ts';

describe('enableCompileCache', () => {
  it('leaves the cache off on a Node without module.enableCompileCache', () => {
    expect(enableCompileCache({})).toBeNull();
  });

  it('leaves it off where turning it on throws or fails', () => {
    expect(
      enableCompileCache({
        enableCompileCache: () => {
          throw new Error('EACCES');
        },
      }),
    ).toBeNull();
    expect(enableCompileCache({ enableCompileCache: () => ({}) })).toBeNull(); // FAILED or DISABLED: no directory
  });

  it("is the user's cache directory's, unless NODE_COMPILE_CACHE names another", () => {
    expect(compileCacheDirectory({ XDG_CACHE_HOME: '/x' })).toBe(path.join('/x', 'kvbench', 'node-compile-cache'));
    expect(compileCacheDirectory({ XDG_CACHE_HOME: '/x', NODE_COMPILE_CACHE: '/y' })).toBe('/y');
    expect(compileCacheDirectory({ XDG_CACHE_HOME: '', HOME: '/h' })).toMatch(/\/\.cache\/kvbench\/node-compile-cache$/);
  });
});
