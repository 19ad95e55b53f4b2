export const KVBENCH_VERSION = '0.8.1';
