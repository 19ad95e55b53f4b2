export const KVBENCH_VERSION = '0.4.0';
