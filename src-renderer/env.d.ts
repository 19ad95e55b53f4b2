/// <reference types="vite/client" />
import type { PreloadApi } from '../src-shared/ipc/api.ts';

declare module '*.vue' {
  import type { DefineComponent } from 'vue';
  const component: DefineComponent<object, object, unknown>;
  export default component;
}

declare global {
  interface Window {
    /** Present only in Electron: the preload's API (one function per channel, and subscribe). */
    kvbench?: PreloadApi;
  }
}
