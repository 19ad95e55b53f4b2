// A GPU's PCIe link from sysfs: /sys/bus/pci/devices/<domain:bus:device.function>/current_link_speed,
// current_link_width, max_link_speed and max_link_width, and the max of the port above it (its slot).
import path from 'node:path';
import { pcieGenOfGigatransfers, type PcieLink } from '../../src-shared/domain/hardware.ts';
import type { SysReader } from './linux-storage.ts';

const PCI_ADDRESS = /^(?:([0-9a-f]{1,8}):)?([0-9a-f]{1,2}):([0-9a-f]{1,2})\.([0-7])$/i;

/**
 * The sysfs name of a PCI bus id as the CUDA driver ("0000:00:06.0", "0000:B1:00.0"), nvidia-smi
 * ("00000000:17:00.0") or lspci ("17:00.0") writes it: lower case, a domain of at least 4 hex digits
 * (VMD domains have 5), "0000:17:00.0"; null for anything else.
 */
export function pciSysfsName(busId: string | null): string | null {
  const m = busId === null ? null : PCI_ADDRESS.exec(busId.trim());
  if (!m) return null;
  const domain = Number.parseInt(m[1] ?? '0', 16).toString(16).padStart(4, '0');
  return `${domain}:${m[2].padStart(2, '0')}:${m[3].padStart(2, '0')}.${m[4]}`.toLowerCase();
}

/** The generation of a sysfs link speed ("32.0 GT/s PCIe", older kernels "8 GT/s"); null for "Unknown speed". */
export function linkSpeedGen(speed: string | null): number | null {
  const m = speed === null ? null : /^([\d.]+)\s*GT\/s/i.exec(speed);
  return m ? pcieGenOfGigatransfers(Number(m[1])) : null;
}

/** A sysfs link width ("16"; "x16" on some kernels); null for 0 (link down) or anything else. */
function linkLanes(width: string | null): number | null {
  const m = width === null ? null : /^x?(\d+)$/i.exec(width);
  const n = m ? Number(m[1]) : 0;
  return n > 0 ? n : null;
}

/** The link of the PCI device with this bus id; null when sysfs has no such device (or says nothing of its link). */
export function readPcieLink(sys: SysReader, busId: string | null): PcieLink | null {
  const name = pciSysfsName(busId);
  if (name === null) return null;
  const dir = `/sys/bus/pci/devices/${name}`;
  const link: PcieLink = {
    currentGen: linkSpeedGen(sys.read(`${dir}/current_link_speed`)),
    currentLanes: linkLanes(sys.read(`${dir}/current_link_width`)),
    maxGen: linkSpeedGen(sys.read(`${dir}/max_link_speed`)),
    maxLanes: linkLanes(sys.read(`${dir}/max_link_width`)),
    upstreamMaxGen: null,
    upstreamMaxLanes: null,
  };
  if (link.currentGen === null && link.currentLanes === null && link.maxGen === null && link.maxLanes === null) return null;
  // The device's directory sits in its upstream port's (…/0000:00:01.0/0000:01:00.0); a device on a
  // root bus (…/pci0000:00/0000:00:06.0) has no port above it to read.
  const real = sys.realpath(dir);
  const parent = real === null ? null : path.dirname(real);
  if (parent !== null && pciSysfsName(path.basename(parent)) !== null) {
    link.upstreamMaxGen = linkSpeedGen(sys.read(`${parent}/max_link_speed`));
    link.upstreamMaxLanes = linkLanes(sys.read(`${parent}/max_link_width`));
  }
  return link;
}
