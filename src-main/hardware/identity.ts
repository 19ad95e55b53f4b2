// Stable identities: one for the machine (so its trials group together across weeks and reboots)
// and one for the drive behind a cache directory (so drive A and drive B can be compared, even when
// a drive moves to another machine — when it has a model and serial to recognise it by).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { driveLabelSizeSuffix, type BlockDeviceInfo } from '../../src-shared/domain/hardware.ts';

const sha = (s: string): string => createHash('sha256').update(s).digest('hex');

export interface SystemIdentity {
  id: string;
  source: 'machine-id' | 'os-uuid' | 'hostname';
}

/** The first machine-id found (systemd's, then D-Bus's); null in containers or on other OSes without one. */
export function readMachineId(paths: readonly string[] = ['/etc/machine-id', '/var/lib/dbus/machine-id']): string | null {
  for (const p of paths) {
    try {
      const id = fs.readFileSync(p, 'utf8').trim();
      if (/^[0-9a-f]{16,}$/i.test(id)) return id.toLowerCase();
    } catch {
      // try the next
    }
  }
  return null;
}

/**
 * `sys-` + 16 hex digits of sha256(machine-id | hostname). The machine-id is never stored in clear
 * (it is meant to stay private); the hostname is part of it so a cloned image renamed to another host
 * counts as another system. Without a machine-id the OS UUID stands in, then the hostname alone.
 */
export function systemIdentity(facts: { machineId: string | null; osUuid: string | null; hostname: string }): SystemIdentity {
  if (facts.machineId) return { id: `sys-${sha(`machine-id:${facts.machineId}|host:${facts.hostname}`).slice(0, 16)}`, source: 'machine-id' };
  if (facts.osUuid) return { id: `sys-${sha(`os-uuid:${facts.osUuid}|host:${facts.hostname}`).slice(0, 16)}`, source: 'os-uuid' };
  return { id: `sys-${sha(`host:${facts.hostname}`).slice(0, 16)}`, source: 'hostname' };
}

export interface DriveIdentity {
  id: string;
  basis: 'serial' | 'wwid' | 'local-device' | 'filesystem';
  label: string;
}


// Disks a hypervisor emulates (QEMU SATA/SCSI/NVMe, VirtualBox, VMware, Hyper-V): their model is the
// emulator's and their serial or WWID a default the same on every VM, so they are virtual too.
const EMULATED_DISK_MODEL = /^(QEMU |VBOX |VMware|Virtual disk|Msft Virtual Disk)/i;

function isVirtualDisk(block: BlockDeviceInfo): boolean {
  return block.media === 'virtual' || (block.model !== null && EMULATED_DISK_MODEL.test(block.model));
}

/**
 * A drive's identity. A real drive with both model and serial (or a WWID) is recognised wherever
 * it is: the id depends on those alone. Virtual disks (virtio has no model, and its "serial" is
 * whatever the hypervisor says, often the same on every VM; emulated SATA/SCSI/NVMe disks), dm/md
 * devices over several disks and filesystems without a block device (tmpfs, NFS, FUSE) get an id local
 * to this system. A loop device comes with the disk behind its file (linux-storage.ts), so a loop
 * file on a drive with a serial is that drive.
 */
export function driveIdentity(args: {
  systemId: string;
  block: BlockDeviceInfo | null;
  mountSource: string | null;
  filesystem: string | null;
  mountPoint: string | null;
}): DriveIdentity {
  const { block } = args;
  const real = block !== null && !isVirtualDisk(block);
  if (block && real && block.model && block.serial) {
    return {
      id: `drv-${sha(`model:${block.model}|serial:${block.serial}`).slice(0, 16)}`,
      basis: 'serial',
      // A loop device's drive is the disk holding its file: the same drive, reached through the loop.
      label: `${block.model} (${block.backingFile ? `${block.name} on ` : ''}${block.disks.join('+')}, serial …${block.serial.slice(-4)})`,
    };
  }
  if (block && real && block.wwid) {
    return { id: `drv-${sha(`wwid:${block.wwid}`).slice(0, 16)}`, basis: 'wwid', label: `${block.model ?? block.disks.join('+')} (${block.name})` };
  }
  if (block) {
    const disks = block.disks.join('+');
    return {
      id: `drv-${sha(`system:${args.systemId}|dev:${block.name}|disks:${disks}|size:${block.sizeBytes ?? '?'}`).slice(0, 16)}`,
      basis: 'local-device',
      label: `${block.model ?? `${block.media} disk`} ${disks === block.name ? block.name : `${block.name} on ${disks}`}${driveLabelSizeSuffix(block.sizeBytes)}`,
    };
  }
  const fsDesc = `${args.filesystem ?? 'unknown fs'} ${args.mountSource ?? '?'} at ${args.mountPoint ?? '?'}`;
  return { id: `drv-${sha(`system:${args.systemId}|fs:${fsDesc}`).slice(0, 16)}`, basis: 'filesystem', label: fsDesc };
}
