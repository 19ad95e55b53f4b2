// `kvbench hw`: what kvbench detects on this machine, as a table or JSON.
import os from 'node:os';
import { detectHardware } from '../hardware/detect-hardware.ts';
import { hardwareAdvice } from '../hardware/advice.ts';
import { formatAdvice, formatHardware, SAID_BY_HW_TABLE } from '../hardware/format-hardware.ts';
import { ENGINE_HAS_GPU_TIER } from '../suite/planner.ts';
import { emptyValueErrors, numberFlag, parseCommandArgs } from './command-args.ts';
import { jsonText } from '../../src-shared/domain/label-text.ts';

export const HW_USAGE = `Usage: kvbench hw [--cache-dir DIR] [--json] [--probe [--probe-seconds S]]

Detects CPUs, RAM, GPUs and their memory, disks, and for the cache directory (default: the temp
directory) its mount, filesystem, block device and model, free space, whether direct I/O works there,
and the system and drive identities trials are stored under; then what to know before planning a
suite (the app's advice: a cache dir on the system disk, a virtual machine's noisy disks …).

  --cache-dir DIR   the directory the storage tier would use (need not exist yet)
  --json            print the hardware profile as JSON
  --probe           also measure the drive's raw sequential limit (kvbench probe: direct writes
                    then reads at the engine's block size and depth, files removed after), one
                    thread's memory-copy bandwidth, and with a usable GPU the GPU tier's host↔device
                    copy bandwidth (4 GiB each way through the tier on the first GPU, about a second)
  --probe-seconds S seconds per probe phase (default 3)
  --no-direct-io-probe   do not try O_DIRECT in DIR (nothing is written there then)
`;

export async function hwCommand(argv: string[]): Promise<number> {
  const parsed = parseCommandArgs('hw', HW_USAGE, {
    args: argv,
    options: {
      'cache-dir': { type: 'string' },
      json: { type: 'boolean', default: false },
      probe: { type: 'boolean', default: false },
      'probe-seconds': { type: 'string' },
      'no-direct-io-probe': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (typeof parsed === 'number') return parsed;
  const a = parsed.values;
  const errors = emptyValueErrors(a, ['cache-dir']);
  const probeSeconds = numberFlag('--probe-seconds', a['probe-seconds'], errors, { above: 0, max: 600 }) ?? 3;
  if (errors.length > 0) {
    process.stderr.write(`kvbench hw: ${errors.join('; ')}\n`);
    return 1;
  }
  const hw = await detectHardware(a['cache-dir'] ?? os.tmpdir(), {
    probeDirectIo: !a['no-direct-io-probe'],
    probeBandwidth: a.probe ? { durationS: probeSeconds } : false,
    probeMemory: a.probe,
    probeGpu: a.probe,
  });
  process.stdout.write(a.json ? `${jsonText(hw, 2)}\n` : `${formatHardware(hw)}${formatAdvice(hardwareAdvice(hw, ENGINE_HAS_GPU_TIER), SAID_BY_HW_TABLE)}`);
  return 0;
}
