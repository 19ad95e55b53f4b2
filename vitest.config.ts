import vue from '@vitejs/plugin-vue';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Integration tests start engine processes and move real bytes on a 2-core machine, which CI shares
    // with other work: under a load of 25-30 a single `kvbench run` of a few requests took 22-26 s, so
    // a test of two or three runs needs more than a minute. Only a hung test waits this long.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // Kept out of the user's ~/.cache: test/support/test-cache-home.ts.
    setupFiles: ['test/support/test-cache-home.ts'],
    pool: 'forks',
    fileParallelism: true,
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: {
          name: 'node',
          include: ['test/unit/**/*.test.ts', 'test/integration/**/*.test.ts'],
          exclude: ['test/unit/renderer/**'],
        },
      },
      {
        // Vue components in a DOM (happy-dom), against a fake API object.
        extends: true,
        plugins: [vue()],
        test: { name: 'renderer', include: ['test/unit/renderer/**/*.test.ts'], environment: 'happy-dom' },
      },
      {
        // The built renderer in Debian's Chromium through `kvbench serve` (skipped, loudly, without /usr/bin/chromium).
        extends: true,
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          globalSetup: ['test/e2e/global-setup.ts'],
          testTimeout: 300_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});
