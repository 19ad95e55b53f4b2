// The hardware profile as people read it (`kvbench hw` without --json).
import { binaryBytesText, bufferedLoopMessage, cacheDirRamBacking, pcieLinkText, ramBackedMessage, type GpuCopyProbe, type HardwareProfile } from '../../src-shared/domain/hardware.ts';
import type { Advice } from '../../src-shared/ipc/contract.ts';

const GIB = 1024 ** 3;

/** Bytes in binary units (the CLI's sizes). */
export const fmtBytes = binaryBytesText;

/** Bytes per second as GB/s (10^9), the unit drive makers state. */
export function fmtRate(bytesPerSec: number | null | undefined): string {
  if (bytesPerSec === null || bytesPerSec === undefined || !Number.isFinite(bytesPerSec)) return '—';
  return bytesPerSec >= 1e9 ? `${(bytesPerSec / 1e9).toFixed(2)} GB/s` : `${(bytesPerSec / 1e6).toFixed(0)} MB/s`;
}

const or = (s: string | null | undefined, dflt = '—'): string => (s === null || s === undefined || s === '' ? dflt : s);

export function formatHardware(hw: HardwareProfile): string {
  const lines: string[] = [];
  const row = (k: string, v: string): void => {
    lines.push(`  ${k.padEnd(18)} ${v}`);
  };
  lines.push('System');
  row('id', `${hw.system.id} (from ${hw.system.idSource} + hostname)`);
  row('hostname', hw.system.hostname);
  row('machine', [hw.system.manufacturer, hw.system.model].filter(Boolean).join(' ') || '—');
  if (hw.system.virtual) row('virtual', `yes${hw.system.virtualHost ? ` (${hw.system.virtualHost})` : ''}`);
  row('os', `${or(hw.os.distro, hw.os.platform)} ${or(hw.os.release, '')}, kernel ${or(hw.os.kernel)}, ${hw.os.arch}`);
  lines.push('CPU');
  row('model', `${or(hw.cpu.manufacturer, '')} ${or(hw.cpu.brand)}`.trim());
  row('cores', `${hw.cpu.logicalCores} logical, ${hw.cpu.physicalCores} physical${hw.cpu.sockets ? `, ${hw.cpu.sockets} socket(s)` : ''}`);
  if (hw.cpu.baseSpeedGhz) row('speed', `${hw.cpu.baseSpeedGhz} GHz${hw.cpu.maxSpeedGhz ? ` (max ${hw.cpu.maxSpeedGhz} GHz)` : ''}`);
  lines.push('Memory');
  row('total', `${fmtBytes(hw.memory.totalBytes)} (available ${fmtBytes(hw.memory.availableBytes)}, swap ${fmtBytes(hw.memory.swapTotalBytes)})`);
  if (hw.memoryCopyBytesPerSec) row('copy (1 thread)', fmtRate(hw.memoryCopyBytesPerSec));
  lines.push('GPUs');
  if (hw.gpus.length === 0) lines.push('  none found');
  for (const g of hw.gpus) {
    const use = g.engineUsable ? ', usable by the GPU tier' : g.compute ? ', not usable by the engine (no working NVIDIA driver)' : ' (integrated/display only: not used)';
    row(`#${g.index}`, `${or(g.vendor, '')} ${or(g.model)}, memory ${fmtBytes(g.memoryBytes)}${g.driverVersion ? `, driver ${g.driverVersion}` : ''}${use}`.trim());
    if (g.compute) row('', pcieLinkText(g.pcieLink, fmtRate));
  }
  if (hw.gpuCopy) row('GPU copy', gpuCopyText(hw.gpuCopy));
  if (hw.cuda) {
    // cudaVersion is cuDriverGetVersion's: what the driver supports, not a CUDA toolkit installed.
    row('CUDA driver', hw.cuda.available ? `${hw.cuda.devices.length} device(s), driver ${or(hw.cuda.driverVersion)}, supports CUDA ${or(hw.cuda.cudaVersion)}` : `not usable: ${hw.cuda.reason ?? 'unknown'}`);
  }
  lines.push('Disks');
  if (hw.disks.length === 0) lines.push('  none reported');
  for (const d of hw.disks) {
    row(d.name, `${fmtBytes(d.sizeBytes)} ${d.media}${d.protocol ? ` (${d.protocol})` : ''}, model ${or(d.model)}, serial ${or(d.serial)}${d.removable ? ', removable' : ''}`);
  }
  const c = hw.cacheDir;
  if (c) {
    lines.push(`Cache directory ${c.path}`);
    row('resolved', `${c.resolvedPath}${c.exists ? '' : ' (nearest existing ancestor: the directory does not exist yet)'}`);
    row('mount', `${or(c.mountPoint)} (${or(c.filesystem)} on ${or(c.mountSource)})`);
    const ram = cacheDirRamBacking(c);
    if (ram !== null) row('WARNING', `${ramBackedMessage(ram)} (direct I/O or not)`);
    const loops = c.bufferedLoops ?? [];
    if (loops.length > 0) row('WARNING', bufferedLoopMessage(loops));
    const b = c.blockDevice;
    row(
      'block device',
      b
        ? `${b.name}${b.disks.length === 1 && b.disks[0] === b.name ? '' : ` on ${b.disks.join('+')}`}, ${b.media}, model ${or(b.model)}, serial ${or(b.serial)}, ` +
            `logical block ${b.logicalBlockBytes ?? '?'} B, physical ${b.physicalBlockBytes ?? '?'} B${b.backingFile ? `, backed by ${b.backingFile}${b.backingFilesystem ? ` (on ${b.backingFilesystem})` : ''}` : ''}`
        : 'none (not a block-device filesystem)',
    );
    row('space', `${fmtBytes(c.freeBytes)} free of ${fmtBytes(c.totalBytes)}${c.writable ? '' : ` (NOT writable${c.notWritableReason ? `: ${c.notWritableReason}` : ''})`}`);
    row('direct I/O', c.directIo === null ? 'not probed' : c.directIo.supported ? `yes (logical block ${c.directIo.logicalBlockBytes} B)` : `no: ${c.directIo.reason}`);
    row('drive id', `${c.driveId} (${c.driveIdBasis}): ${c.driveLabel}`);
    if (c.bandwidth) {
      row(
        'raw limit',
        `read ${fmtRate(c.bandwidth.readBytesPerSec)}, write ${fmtRate(c.bandwidth.writeBytesPerSec)} ` +
          `(kvbench probe: ${fmtBytes(c.bandwidth.fileBytes)} of files, ${fmtBytes(c.bandwidth.chunkBytes)} requests × ${c.bandwidth.depth}, ${c.bandwidth.phaseSeconds} s per phase` +
          `${c.bandwidth.directIo ? ', O_DIRECT' : ', buffered'}${c.bandwidth.pageCacheSuspected ? '; reads may have come from the page cache' : ''})`,
      );
    }
  }
  if (hw.warnings.length > 0) {
    lines.push('Notes');
    for (const w of hw.warnings) lines.push(`  - ${w}`);
  }
  return `${lines.join('\n')}\n`;
}

/** The GPU copy probe's limits and how they were measured, as `kvbench hw` prints them. */
export function gpuCopyText(p: GpuCopyProbe): string {
  return (
    `host→device ${fmtRate(p.h2dBytesPerSec)}, device→host ${fmtRate(p.d2hBytesPerSec)} (kvbench GPU copy probe on GPU ${p.device}, ${p.model}: ` +
    `${fmtBytes(p.bytesPerDirection)} each way in ${fmtBytes(p.chunkBytes)} copies through the GPU tier, ${p.stagingPinned ? 'pinned' : 'NOT pinned (pageable)'} staging, ` +
    `${p.copyThreads} copy threads; link busy)`
  );
}

const ADVICE_LEVEL: Record<Advice['level'], string> = { error: 'ERROR', warn: 'WARNING', info: 'note' };

/**
 * The hardware advice (advice.ts) as lines under a heading, less the codes `omit` names (what the
 * surrounding output says already); '' when nothing is left.
 */
export function formatAdvice(advice: readonly Advice[], omit: ReadonlySet<string> = new Set()): string {
  const shown = advice.filter((a) => !omit.has(a.code));
  if (shown.length === 0) return '';
  return `Advice\n${shown.map((a) => `  ${ADVICE_LEVEL[a.level]}: ${a.message}`).join('\n')}\n`;
}

/** Advice `kvbench hw`'s table states itself: its GPU list, the RAM-backed and buffered-loop WARNING rows, NOT writable, the detection notes. */
export const SAID_BY_HW_TABLE: ReadonlySet<string> = new Set(['no-gpu', 'ram-backed', 'buffered-loop', 'not-writable', 'detection']);

export { GIB };
