// The GPU tier's practical copy limit, to judge its efficiency against as the memory-copy probe's is
// the CPU tier's (bandwidth-probe.ts) and the raw-limit probe's the drive's (drive-probe.ts): entries
// written to one GPU and read back through the engine's own GpuTier (pinned staging, its copy
// threads, chunked async copies), each direction timed as the tier times a run's, by link busy.
import { randomUUID } from 'node:crypto';
import type { GpuCopyProbe } from '../../src-shared/domain/hardware.ts';
import type { CudaDriver } from '../engine/tiers/gpu/cuda-driver.ts';
import type { DeviceHeadroom } from '../engine/tiers/gpu/device-arena.ts';
import { openGpuTier } from '../engine/tiers/gpu/open-gpu-tier.ts';
import type { EntryRef } from '../engine/tiers/tier-backend.ts';

const MIB = 1024 * 1024;

export interface GpuCopyProbeOptions {
  /** A driver to use (tests); default libcuda.so.1 (or KVBENCH_CUDA_LIBRARY), as the engine loads it. */
  driver?: CudaDriver;
  /** Bytes per copy: the engine's default chunk (--io-chunk-mib 16). */
  chunkBytes?: number;
  /** Size of the one entry written and read back each round (the device memory the probe holds). */
  entryBytes?: number;
  /** Timed rounds: entryBytes × rounds move each way (4 GiB by default, ~0.1 s each way on a Gen5 x16 link). */
  rounds?: number;
  /** As the engine's GPU tier: 2 copy threads, 8 staging slots. */
  copyThreads?: number;
  stagingSlots?: number;
  headroom?: DeviceHeadroom;
  /** Where the tier reads the NVIDIA driver version (tests); the probe does not report it. */
  procVersionPath?: string;
  nvidiaSmi?: string | null;
}

/** Writes and reads back entries through a GpuTier on the first GPU; throws with the reason when no tier opens. */
export async function probeGpuCopy(o: GpuCopyProbeOptions = {}): Promise<GpuCopyProbe> {
  const chunkBytes = o.chunkBytes ?? 16 * MIB;
  const entryBytes = o.entryBytes ?? 256 * MIB;
  const rounds = o.rounds ?? 16;
  const opened = await openGpuTier({
    ...(o.driver ? { driver: o.driver } : {}),
    numGpus: 1,
    perDeviceBudgetBytes: entryBytes,
    chunkBytes,
    copyThreads: o.copyThreads ?? 2,
    stagingSlots: o.stagingSlots ?? 8,
    ...(o.headroom ? { headroom: o.headroom } : {}),
    ...(o.procVersionPath !== undefined ? { procVersionPath: o.procVersionPath } : {}),
    ...(o.nvidiaSmi !== undefined ? { nvidiaSmi: o.nvidiaSmi } : {}),
  });
  if (!opened.ok) throw new Error(opened.reason);
  const tier = opened.tier;
  const measuredAt = new Date().toISOString();
  try {
    if (tier.budgetBytes < entryBytes) throw new Error(`${tier.report().shortfallReason ?? 'the GPU could not reserve'} (the probe needs ${entryBytes} bytes)`);
    // The source and sink do nothing: only the copy path is timed, as the staging holds what it held.
    const round = async (i: number): Promise<void> => {
      const entry: EntryRef = { key: `gpu-copy-probe-${randomUUID()}-${i}`, keyHash: BigInt(i), sizeBytes: entryBytes };
      await tier.write(entry, async () => undefined);
      await tier.read(entry);
      await tier.remove(entry);
    };
    // One untimed round first: the first copies pay for what the driver sets up lazily.
    await round(-1);
    tier.resetCopyStats();
    for (let i = 0; i < rounds; i++) await round(i);
    const r = tier.report();
    return {
      device: r.devices[0].index,
      model: r.devices[0].name,
      h2dBytesPerSec: r.h2d.linkBusyBytesPerSec,
      d2hBytesPerSec: r.d2h.linkBusyBytesPerSec,
      chunkBytes,
      bytesPerDirection: r.h2d.bytes,
      copyThreads: r.copyThreads,
      stagingPinned: r.stagingPinned,
      measuredAt,
    };
  } finally {
    await tier.close();
  }
}
