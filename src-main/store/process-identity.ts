// The store's name for src-main/util/process-identity.ts, which the engine needs too (to sweep the run
// directories of dead engines) and which it may not import from the store.
export * from '../util/process-identity.ts';
