export const KVBENCH_VERSION = '0.5.0';
