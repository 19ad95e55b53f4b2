// What a person should know about the detected hardware before planning a suite: the wizard's
// warnings ("no GPU: GPU scenarios skipped", "cache dir on the system disk" …), and the same lines in
// `kvbench hw` and before `kvbench suite`'s plan for whoever runs it over SSH. Derived from the
// hardware profile only; the planner's own skips and problems come with the plan.
import { bufferedLoopMessage, cacheDirRamBacking, computeGpus, ramBackedMessage, type HardwareProfile } from '../../src-shared/domain/hardware.ts';
import { NINE_SCENARIO_IDS, SCENARIOS } from '../../src-shared/domain/scenarios.ts';
import type { Advice } from '../../src-shared/ipc/contract.ts';
import { profileSpaceNeeds, sizedProblem, type ProfileSpaceNeed } from '../suite/planner.ts';

const GIB = 1024 ** 3;
/** Mount points that are the operating system's own disk. */
const SYSTEM_MOUNTS = new Set(['/', '/usr', '/var', '/home', '/tmp', '/boot']);
const NETWORK_FILESYSTEMS = /^(nfs\d?|cifs|smb3?|ceph|glusterfs|lustre|beegfs|gpfs|9p|fuse\..*|virtiofs)$/i;

export function hardwareAdvice(hw: HardwareProfile, engineHasGpuTier: boolean): Advice[] {
  const out: Advice[] = [];
  const gpuScenarios = NINE_SCENARIO_IDS.filter((id) => SCENARIOS[id].requiresGpu).map((id) => SCENARIOS[id].label);
  const gpus = computeGpus(hw);
  if (gpus.length === 0) {
    out.push({ level: 'warn', code: 'no-gpu', message: `No GPU: GPU scenarios skipped (${gpuScenarios.join(', ')}).` });
  } else if (!engineHasGpuTier) {
    out.push({ level: 'info', code: 'no-gpu-tier', message: `A GPU was detected, but this kvbench engine has no GPU tier: GPU scenarios skipped (${gpuScenarios.join(', ')}).` });
  }
  const c = hw.cacheDir;
  if (!c) {
    out.push({ level: 'error', code: 'no-cache-dir', message: 'No cache directory was examined.' });
  } else {
    if (!c.writable) {
      out.push({ level: 'error', code: 'not-writable', message: c.notWritableReason ? `The cache directory cannot be used: ${c.notWritableReason}.` : `The cache directory ${c.resolvedPath} is not writable.` });
    }
    if (c.mountPoint !== null && SYSTEM_MOUNTS.has(c.mountPoint)) {
      out.push({
        level: 'warn',
        code: 'system-disk',
        message: `Cache dir on the system disk (${c.mountPoint}${c.blockDevice ? ` on ${c.blockDevice.name}` : ''}): the operating system shares the drive with the benchmark and its numbers are noisier. Prefer a dedicated drive.`,
      });
    }
    const fsType = c.filesystem ?? '';
    const ram = cacheDirRamBacking(c);
    if (ram !== null) {
      out.push({ level: 'warn', code: 'ram-backed', message: `The cache directory is on a ${ramBackedMessage(ram)}.` });
    } else if ((c.bufferedLoops ?? []).length > 0) {
      out.push({ level: 'warn', code: 'buffered-loop', message: `The cache directory is on a ${bufferedLoopMessage(c.bufferedLoops!)}.` });
    } else if (NETWORK_FILESYSTEMS.test(fsType)) {
      out.push({ level: 'info', code: 'network-fs', message: `The cache directory is on a network or FUSE filesystem (${fsType}): results include the network.` });
    }
    if (c.directIo && !c.directIo.supported) {
      out.push({ level: 'warn', code: 'no-direct-io', message: `Direct I/O is not available there (${c.directIo.reason ?? 'unknown reason'}): storage reads may come from the page cache.` });
    }
    if (c.freeBytes !== null) {
      const lowSpace = lowSpaceAdvice(c.freeBytes, profileSpaceNeeds(hw, engineHasGpuTier));
      if (lowSpace) out.push(lowSpace);
    }
    if (c.blockDevice?.media === 'hdd' && !hw.system.virtual) {
      out.push({ level: 'info', code: 'rotational', message: 'The drive reports itself as rotational (HDD).' });
    }
  }
  if (hw.system.virtual) {
    out.push({ level: 'info', code: 'virtual', message: `This is a virtual machine${hw.system.virtualHost ? ` (${hw.system.virtualHost})` : ''}: virtual disks are noisy; compare runs taken close together.` });
  }
  // Detection's own notes, less the ones said above already.
  for (const w of hw.warnings) {
    if (gpus.length === 0 && /no gpu/i.test(w)) continue;
    out.push({ level: 'info', code: 'detection', message: w });
  }
  return out;
}

/** "a", "a and b", "a, b and c". */
const listed = (items: readonly string[]): string => (items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`);

/**
 * The warning about the free space, from what the planner needs for each profile there (the same
 * bytes its Plan refuses below): which profiles fit, and when none does, what the smallest needs and
 * whether a smaller storage tier capacity still could. None when every profile fits.
 */
export function lowSpaceAdvice(freeBytes: number, needs: readonly ProfileSpaceNeed[]): Advice | null {
  const tooBig = needs.filter((n) => n.requiredBytes > freeBytes);
  if (tooBig.length === 0) return null;
  // Each size noted with its bytes (sizedProblem), so the app states them in the units chosen in Settings.
  const { text: message, sizes } = sizedProblem((size) => {
    const free = `Only ${size(freeBytes)} free in the cache directory`;
    const fitting = needs.filter((n) => n.requiredBytes <= freeBytes).map((n) => n.profile);
    if (fitting.length > 0) {
      const refused = tooBig.map((n, i) => `${n.profile}${i === 0 ? ' needs' : ''} ${size(n.requiredBytes)}`);
      return `${free}: only the ${listed(fitting)} profile${fitting.length > 1 ? 's fit' : ' fits'} (${refused.join(', ')}).`;
    }
    const smallest = tooBig.reduce((a, n) => (n.requiredBytes < a.requiredBytes ? n : a));
    // A capacity the user sets must hold one KV entry; the field takes GiB, so its value is said in GiB.
    const minCapGb = Math.ceil((smallest.largestEntryBytes / GIB) * 100) / 100;
    const way =
      minCapGb * GIB <= freeBytes
        ? ` The ${smallest.profile} profile fits with a smaller --storage-capacity-gb: from ${minCapGb} GiB (one KV entry of ${smallest.model}) up to the free space.`
        : ` Nor would a smaller storage tier capacity: one KV entry of ${smallest.model} is ${size(smallest.largestEntryBytes)}.`;
    return `${free}: no profile fits (${smallest.profile}, the smallest, needs ${size(smallest.requiredBytes)}).${way}`;
  });
  return { level: 'warn', code: 'low-space', message, sizeBytes: freeBytes, sizes };
}
