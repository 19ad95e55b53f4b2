export const KVBENCH_VERSION = '0.2.0';
