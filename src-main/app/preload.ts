// The sandboxed preload: exposes one function per contract channel and an event subscription on
// window.kvbench (see preload-api.ts). The page never sees ipcRenderer or an IPC event object.
// Built into one CommonJS file (vite.preload.config.ts); only `electron` is required at run time.
import { contextBridge, ipcRenderer } from 'electron';
import { PRELOAD_GLOBAL } from '../../src-shared/ipc/channels.ts';
import { buildPreloadApi } from './preload-api.ts';

contextBridge.exposeInMainWorld(PRELOAD_GLOBAL, buildPreloadApi(ipcRenderer));
