// The renderer's build (Vue 3): src-renderer → out/renderer, with relative asset paths so the same
// build loads from Electron's app:// protocol and from `kvbench serve`.
import vue from '@vitejs/plugin-vue';
import { defineConfig } from 'vite';

export default defineConfig({
  root: 'src-renderer',
  base: './',
  plugins: [vue()],
  build: {
    outDir: '../out/renderer',
    emptyOutDir: true,
    target: 'es2022',
    // No inline scripts or styles: the CSP forbids them.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    chunkSizeWarningLimit: 800,
  },
});
