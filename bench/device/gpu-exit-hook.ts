// The GPU tier's process-exit hook on a real GPU (bench/device/gpu-check.sh runs it): a tier that
// was never closed, ended by process.exit() or by an uncaught exception, must give its device memory
// back from the hook, while the process still runs. The kernel driver would reclaim it after the
// process anyway, so nvidia-smi cannot tell the two apart; this asks the driver itself
// (cuMemGetInfo) from an 'exit' listener registered after the tier's hook, which runs after it.
//
// usage: node bench/device/gpu-exit-hook.ts exit|throw [--budget-gib 8]
// Prints one "EXIT-HOOK" line: free device memory before the tier opened, while it held its
// reservation, and after its hook ran, and the verdict (the hook gave back at least 95 % of what
// the tier took).
import { parseArgs } from 'node:util';
import { loadCudaDriver } from '../../src-main/engine/tiers/gpu/koffi-cuda-driver.ts';
import { GpuTier } from '../../src-main/engine/tiers/gpu/gpu-tier.ts';

const GiB = 1024 ** 3;
const { positionals, values } = parseArgs({ allowPositionals: true, options: { 'budget-gib': { type: 'string', default: '8' } } });
const how = positionals[0];
if (how !== 'exit' && how !== 'throw') {
  console.error('usage: node bench/device/gpu-exit-hook.ts exit|throw [--budget-gib N]');
  process.exit(2);
}
const budgetBytes = Number(values['budget-gib']) * GiB;
const loaded = await loadCudaDriver();
if (!loaded.ok) {
  console.log(`EXIT-HOOK ${how}: NOT MEASURED (${loaded.reason})`);
  process.exit(0);
}
const driver = loaded.driver;
// The primary context stays retained by this script, so the free memory can be asked after the
// hook (which frees the slabs and unpins the staging, but leaves contexts to the process's end).
driver.cuInit(0);
driver.cuCtxSetCurrent(driver.cuDevicePrimaryCtxRetain(driver.cuDeviceGet(0)));
const gib = (b: number): string => `${(b / GiB).toFixed(2)} GiB`;
const before = driver.cuMemGetInfo().freeBytes;
const tier = await GpuTier.open({ driver, numGpus: 1, perDeviceBudgetBytes: budgetBytes, chunkBytes: 16 * 1024 ** 2 });
// Copies through it first, so its copy workers and staging have been used.
const entry = { key: 'e', keyHash: 1n, sizeBytes: 256 * 1024 ** 2 };
await tier.write(entry, async () => undefined);
await tier.read(entry);
const holding = driver.cuMemGetInfo().freeBytes;

process.on('exit', (code) => {
  let after: number | string;
  try {
    after = driver.cuMemGetInfo().freeBytes;
  } catch (err) {
    after = `cuMemGetInfo failed: ${(err as Error).message}`;
  }
  const taken = before - holding;
  const verdict =
    typeof after !== 'number' ? 'NOT MEASURED' : taken <= 0 ? 'NOT MEASURED (the tier took no memory)' : after - holding >= 0.95 * taken ? 'ok' : 'MEMORY NOT GIVEN BACK BY THE HOOK';
  // process.exit's code, or 1 after an uncaught exception.
  console.log(
    `EXIT-HOOK ${how}: ${verdict}; free device memory ${gib(before)} before the tier opened, ${gib(holding)} while it held ${gib(taken)}, ` +
      `${typeof after === 'number' ? gib(after) : after} after its exit hook (exit code ${code})`,
  );
});
if (how === 'exit') process.exit(0);
throw new Error('an uncaught exception with the GPU tier open (on purpose)');
