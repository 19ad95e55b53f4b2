export const KVBENCH_VERSION = '0.3.0';
