// The Electron preload: one CommonJS file (sandboxed preloads cannot load modules), built from
// src-main/app/preload.ts and the channel list it exposes. Only `electron` stays external.
import { defineConfig } from 'vite';

export default defineConfig({
  build: {
    outDir: 'out/preload',
    emptyOutDir: true,
    target: 'node22',
    minify: false,
    lib: { entry: 'src-main/app/preload.ts', formats: ['cjs'], fileName: () => 'preload.cjs' },
    rollupOptions: { external: ['electron'] },
  },
});
