// Where the built front end lives, relative to the sources (the same layout in a checkout and in
// the packaged app): `npm run build:renderer` writes out/renderer, `npm run build:preload` out/preload.
import { fileURLToPath } from 'node:url';

/** The repository (or packaged app) root. */
export const APP_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const RENDERER_DIR = fileURLToPath(new URL('../../out/renderer/', import.meta.url));
export const PRELOAD_FILE = fileURLToPath(new URL('../../out/preload/preload.cjs', import.meta.url));
/** The engine's entry point, for hosts that start it themselves (the Electron utility process). */
export const ENGINE_ENTRY_FILE = fileURLToPath(new URL('../engine/engine-process.ts', import.meta.url));
