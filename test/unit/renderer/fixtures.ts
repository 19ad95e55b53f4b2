// Small, pure data for the renderer's tests (no Node: these files are type-checked with the DOM lib).
import type { HardwareProfile } from '../../../src-shared/domain/hardware.ts';
import type { StatedSize, SuitePlan } from '../../../src-shared/domain/scenarios.ts';
import { METRIC_BY_KEY } from '../../../src-shared/domain/store-types.ts';
import type { ResponseOf, Settings, SuiteRecordData, TrialRecordData } from '../../../src-shared/ipc/contract.ts';

const GIB = 1024 ** 3;

export const SETTINGS: Settings = { databasePath: '/data/kvbench.db', defaultCacheDir: '', byteUnits: 'decimal', latencyUnit: 'ms' };

export function appInfo(over: Partial<ResponseOf<'app.info'>> = {}): ResponseOf<'app.info'> {
  return {
    version: '0.1.0',
    mode: 'browser',
    platform: 'linux x64',
    hostname: 'lab1',
    databasePath: '/data/kvbench.db',
    databaseError: null,
    databaseDamaged: null,
    databaseRecovering: null,
    databaseReadOnly: null,
    databaseNotes: [],
    settingsFile: '/data/settings.json',
    settings: SETTINGS,
    settingsProblems: [],
    defaultCacheDirProblem: null,
    suggestedCacheDir: '/mnt/nvme/kv',
    models: ['llama3.1-8b', 'tiny-1b'],
    defaultModel: 'llama3.1-8b',
    engineHasGpuTier: true,
    ...over,
  };
}

export function hardware(): HardwareProfile {
  return {
    version: 1,
    detectedAt: '2026-11-01T00:00:00.000Z',
    kvbenchVersion: '0.1.0',
    system: { id: 'sys-1', idSource: 'machine-id', hostname: 'lab1', manufacturer: 'Dell', model: 'R760', virtual: false, virtualHost: null },
    os: { platform: 'linux', distro: 'Debian GNU/Linux', release: '12', kernel: '6.1', arch: 'x64' },
    cpu: { manufacturer: 'AMD', brand: 'EPYC 9454', logicalCores: 96, physicalCores: 48, sockets: 1, baseSpeedGhz: 2.75, maxSpeedGhz: 3.8 },
    memory: { totalBytes: 512 * GIB, availableBytes: 480 * GIB, swapTotalBytes: 0 },
    gpus: [],
    disks: [{ name: 'nvme0n1', device: '/dev/nvme0n1', sizeBytes: 3.84e12, model: 'Vendor X 3.84TB', serial: 'S1', vendor: null, protocol: 'NVMe', rotational: false, media: 'nvme', removable: false }],
    cacheDir: {
      path: '/mnt/nvme/kv',
      resolvedPath: '/mnt/nvme',
      exists: false,
      writable: true,
      mountPoint: '/mnt/nvme',
      filesystem: 'xfs',
      mountSource: '/dev/nvme0n1',
      blockDevice: null,
      totalBytes: 3.8e12,
      freeBytes: 3.5e12,
      directIo: { supported: true, reason: null, logicalBlockBytes: 4096 },
      driveId: 'drv-1',
      driveIdBasis: 'serial',
      driveLabel: 'Vendor X 3.84TB (nvme0n1)',
      bandwidth: null,
    },
    memoryCopyBytesPerSec: null,
    warnings: [],
  } as unknown as HardwareProfile;
}

export function plan(over: { fits?: boolean } = {}): SuitePlan {
  const run = (position: number, scenarioId: string, label: string) => ({
    position,
    scenarioId,
    label,
    options: { model: 'tiny-1b', numUsers: 4, gpuMemGb: 0, cpuMemGb: 1, duration: 3, storageCapacityGb: 2 },
    trials: 2,
    uvThreadpoolSize: 20,
    estimatedSecondsPerTrial: 5.5,
    diskBytesEstimate: 2 * GIB,
    diskBytesRequired: 2 * GIB,
    derivation: ['model tiny-1b, 3 s'],
  });
  const fits = over.fits ?? true;
  return {
    version: 1,
    profile: 'smoke',
    trials: 2,
    model: 'tiny-1b',
    cacheDir: '/mnt/nvme/kv',
    systemId: 'sys-1',
    driveId: 'drv-1',
    createdAt: '2026-11-01T00:00:00.000Z',
    runs: [run(0, 'cpu-only', 'CPU only'), run(1, 'storage-only', 'Storage only')],
    skipped: [{ scenarioId: 'gpu-only', label: 'GPU only', reason: 'no GPU detected' }],
    estimate: {
      trialCount: 4,
      totalSeconds: 22,
      peakDiskBytes: 2 * GIB,
      requiredDiskBytes: 2 * GIB,
      freeBytes: fits ? 3.5e12 : GIB,
      fits,
      problems: fits ? [] : ['the cache directory cannot hold this suite: it needs 2.00 GiB free'],
    },
    notes: [],
  };
}

/** The planner's refusal of the smoke suite where 20 MiB (21.0 MB) is free, as planSuite writes it (its test checks that). */
export const LOW_SPACE_PROBLEM: { text: string; sizes: StatedSize[] } = {
  text:
    'the cache directory cannot hold this suite: it needs 2.00 GiB free (cpu-only: storage tier 2 GiB) but /mnt/kv has 20.0 MiB free. ' +
    'Free space, choose another --cache-dir, or set a smaller --storage-capacity-gb',
  sizes: [
    { bytes: 2 * GIB, text: '2.00 GiB' },
    { bytes: 20 * 1024 ** 2, text: '20.0 MiB' },
  ],
};

export function trial(id: number, over: Partial<TrialRecordData> = {}): TrialRecordData {
  return {
    id,
    runId: 1,
    suiteId: 1,
    suiteLabel: null,
    systemId: 'sys-1',
    systemLabel: 'lab1',
    driveId: 'drv-1',
    driveLabel: 'Vendor X',
    scenarioId: 'storage-only',
    trialIndex: id - 1,
    attempt: 1,
    status: 'complete',
    statusReason: null,
    configKey: 'k1',
    options: { model: 'tiny-1b' },
    seed: 42,
    startedAt: `2026-11-0${id}T10:00:00.000Z`,
    finishedAt: null,
    wallMs: 5000,
    resultsFormat: 'kvbench',
    sourceFile: null,
    kvbenchVersion: '0.1.0',
    measuredByVersion: '0.1.0',
    storageRamBacking: null,
    metrics: { wall_clock_throughput_tok_per_s: 100 * id, storage_read_bytes_per_s: 2.5e9, e2e_p95_ms: 12.5 },
    ...over,
  };
}

export function suiteRecord(status: SuiteRecordData['status'], id = 7, over: Partial<SuiteRecordData> = {}): SuiteRecordData {
  return {
    id,
    systemId: 'sys-1',
    driveId: null,
    profile: 'quick',
    label: null,
    status,
    source: 'suite',
    cacheDir: '/mnt/nvme/kv',
    createdAt: '2026-11-02T10:00:00.000Z',
    finishedAt: null,
    kvbenchVersion: '0.1.0',
    trialCounts: { running: 0, complete: 1, partial: 0, failed: 0, aborted: 0 },
    trialsLeft: 0,
    trialsDeleted: 0,
    ...over,
  };
}

export function report(): ResponseOf<'report.build'> {
  const agg = (median: number, p95: number, cv: number | null) => ({ n: 3, median, p95, mean: median, min: median, max: p95, cv });
  return {
    title: 'Suite 7 · quick',
    trialCount: 3,
    suite: null,
    report: {
      method: 'median and P95 across trials',
      includeIncomplete: false,
      excludeFlagged: false,
      excludedFlagged: null,
      suiteLabels: [{ label: null, suiteIds: [7] }],
      scenarios: [
        {
          scenarioId: 'storage-only',
          label: 'Storage only',
          configKey: 'k1',
          configDescription: 'llama3.1-8b, 50 users, 30 s, CPU 0.5 GiB, GPU 0 GiB, generation realistic',
          options: {},
          systemId: 'sys-1',
          systemLabel: 'lab1',
          driveId: 'drv-1',
          driveLabel: 'Vendor X',
          systemLabels: ['lab1'],
          suiteLabel: null,
          trialsTotal: 4,
          trialIds: [1, 2, 3],
          excluded: [{ trialId: 4, trialIndex: 3, attempt: 1, status: 'failed', reason: 'ENGINE_CRASHED: killed', supersededBy: null, flags: [] }],
          cautions: [{ trialId: 2, trialIndex: 1, message: 'the device read 12.0 % of the bytes the storage tier read: the page cache served the rest' }],
          ramBackings: [],
          pageCacheFlagged: 1,
          spilledTrials: 0,
          metrics: [
            { metric: METRIC_BY_KEY.wall_clock_throughput_tok_per_s, aggregate: agg(1234.5, 1300, 0.02), olderDefinition: null },
            { metric: METRIC_BY_KEY.storage_read_p95_ms, aggregate: agg(4.25, 5.5, 0.25), olderDefinition: null },
            { metric: METRIC_BY_KEY.storage_read_bytes_per_s, aggregate: agg(2.5e9, 2.7e9, 0.05), olderDefinition: null },
            { metric: METRIC_BY_KEY.peak_rss_bytes, aggregate: agg(1e9, 1.1e9, 0.01), olderDefinition: null },
          ],
          definitionSplits: [],
          pooled: [{ name: 'end_to_end', trials: 3, damagedTrials: 0, count: 900, p50Ms: 10, p95Ms: 20, p99Ms: 30, olderDefinition: null }],
          withoutHistograms: { trials: 0, referenceImports: 0 },
        },
      ],
    },
    tiers: {
      baseline: 'storage-only',
      probe: { readBytesPerS: 7e9, writeBytesPerS: 5e9, memoryCopyBytesPerS: 1e10, source: 'kvbench probe of Vendor X', measuredAt: null, readNote: null, readLimitFrom: 'probe', writeLimitFrom: 'probe', memoryCopySource: 'kvbench memory-copy probe (one thread)', memoryCopyMeasuredAt: null },
      notes: [],
      rows: [
        {
          scenarioId: 'storage-only', label: 'Storage only', configKey: 'k1', configDescription: 'd', systemId: 'sys-1', systemLabel: 'lab1', driveId: 'drv-1', driveLabel: 'Vendor X', suiteLabel: null, gpuMemGb: 0, cpuMemGb: 0.5, numUsers: 50, finalUsers: null, n: 3, fewestTrials: 3, trialsNote: null, wallClockTokPerS: 1234.5, storageTokPerS: 2000, speedupWallClock: 1,
          speedupStorageMetric: 1, baselineNote: null, speedupBaselineUsers: null, gpuReadP95Ms: null, cpuReadP95Ms: 0.5, storageReadP95Ms: 4.25, storageWriteP95Ms: 6, bytesRead: 5e10, bytesWritten: 2e10, storageReadBytesPerS: 2.5e9,
          storageWriteBytesPerS: 1e9, storageReadEfficiency: 0.357, storageWriteEfficiency: 0.2, cpuReadEfficiency: null, gpuReadBusyEfficiency: null, gpuWriteBusyEfficiency: null,
          storageReadEfficiencyNote: null, storageWriteEfficiencyNote: null, cpuReadEfficiencyNote: 'no memory-copy probe', gpuReadBusyEfficiencyNote: 'no GPU tier', gpuWriteBusyEfficiencyNote: 'no GPU tier',
          limits: { readBytesPerS: 7e9, writeBytesPerS: 5e9, memoryCopyBytesPerS: 1e10, source: 'kvbench probe of Vendor X', measuredAt: null, readNote: null, readLimitFrom: 'probe', writeLimitFrom: 'probe', memoryCopySource: 'kvbench memory-copy probe (one thread)', memoryCopyMeasuredAt: null },
        },
      ],
      includeIncomplete: false,
      excludeFlagged: false,
    },
  };
}

/** Where export.create's file went in kvbench serve: a one-time download link. */
export const DOWNLOAD = { kind: 'download' as const, url: `/api/download/${'a'.repeat(48)}` };
