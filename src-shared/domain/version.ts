export const KVBENCH_VERSION = '0.6.0';
