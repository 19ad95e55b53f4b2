export const KVBENCH_VERSION = '0.1.0';
