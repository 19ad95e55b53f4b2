export const KVBENCH_VERSION = '0.7.0';
