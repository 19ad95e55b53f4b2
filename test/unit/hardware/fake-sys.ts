// A fake /proc + /sys tree in a temp directory, laid out like the kernel's, for the storage readers.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export function makeFakeSys(): { root: string; cleanup: () => void } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'kvb-fake-sys-'));
  const w = (p: string, content: string): void => {
    fs.mkdirSync(path.dirname(path.join(root, p)), { recursive: true });
    fs.writeFileSync(path.join(root, p), `${content}\n`);
  };
  const link = (p: string, target: string): void => {
    fs.mkdirSync(path.dirname(path.join(root, p)), { recursive: true });
    fs.symlinkSync(target, path.join(root, p));
  };
  w(
    '/proc/self/mountinfo',
    [
      '27 1 259:2 / / rw,relatime - ext4 /dev/nvme0n1p2 rw',
      '30 27 0:23 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=1024k',
      '31 27 253:0 / /mnt/fast rw,relatime - xfs /dev/mapper/vg-fast rw',
      '32 27 254:0 / /mnt/virt rw,relatime shared:5 - ext4 /dev/vda rw',
      '33 27 0:50 / /mnt/nfs\\040share rw,relatime - nfs4 server:/export rw',
      'garbage line',
    ].join('\n'),
  );
  // NVMe namespace with a partition.
  w('/sys/devices/pci0/nvme/nvme0/nvme0n1/nvme0n1p2/partition', '2');
  w('/sys/devices/pci0/nvme/nvme0/nvme0n1/nvme0n1p2/size', '1000000');
  w('/sys/devices/pci0/nvme/nvme0/nvme0n1/nvme0n1p2/dev', '259:2');
  link('/sys/class/block/nvme0n1p2', '../../devices/pci0/nvme/nvme0/nvme0n1/nvme0n1p2');
  link('/sys/dev/block/259:2', '../../devices/pci0/nvme/nvme0/nvme0n1/nvme0n1p2');
  w('/sys/block/nvme0n1/size', String((2 * 1024 ** 4) / 512));
  w('/sys/block/nvme0n1/removable', '0');
  w('/sys/block/nvme0n1/queue/rotational', '0');
  w('/sys/block/nvme0n1/queue/logical_block_size', '512');
  w('/sys/block/nvme0n1/queue/physical_block_size', '4096');
  w('/sys/block/nvme0n1/device/model', 'Samsung SSD 990 PRO 2TB');
  w('/sys/block/nvme0n1/device/serial', 'S6Z2NJ0W123456');
  w('/sys/block/nvme0n1/device/transport', 'pcie');
  // A dm device over two SATA partitions.
  w('/sys/devices/virtual/block/dm-0/dev', '253:0');
  w('/sys/devices/virtual/block/dm-0/size', '2000000');
  link('/sys/class/block/dm-0', '../../devices/virtual/block/dm-0');
  link('/sys/dev/block/253:0', '../../devices/virtual/block/dm-0');
  fs.mkdirSync(path.join(root, '/sys/block/dm-0/slaves/sda1'), { recursive: true });
  fs.mkdirSync(path.join(root, '/sys/block/dm-0/slaves/sdb1'), { recursive: true });
  for (const d of ['sda', 'sdb']) {
    w(`/sys/devices/ata/${d}/${d}1/partition`, '1');
    link(`/sys/class/block/${d}1`, `../../devices/ata/${d}/${d}1`);
    w(`/sys/block/${d}/queue/rotational`, '1');
    w(`/sys/block/${d}/device/model`, `WDC ${d.toUpperCase()}`);
    w(`/sys/block/${d}/size`, '100');
  }
  // A virtio disk: no model, a hypervisor-made "serial".
  w('/sys/devices/virtio1/block/vda/dev', '254:0');
  link('/sys/class/block/vda', '../../devices/virtio1/block/vda');
  link('/sys/dev/block/254:0', '../../devices/virtio1/block/vda');
  w('/sys/block/vda/size', String((256 * 1024 ** 3) / 512));
  w('/sys/block/vda/serial', 'overlayblk');
  w('/sys/block/vda/queue/rotational', '1');
  w('/sys/block/vda/queue/logical_block_size', '512');
  fs.mkdirSync(path.join(root, '/sys/drivers/virtio_blk'), { recursive: true });
  link('/sys/block/vda/device/driver', '../../../drivers/virtio_blk');
  // GPUs' PCIe links. One behind a Gen4 switch port, its link trained down to Gen1 while idle; one on
  // a virtual machine's root bus (the lent H200: 0000:00:06.0), with no port above it.
  const pci = (dir: string, speed: [string, string], width: [string, string]): void => {
    w(`${dir}/current_link_speed`, speed[0]);
    w(`${dir}/max_link_speed`, speed[1]);
    w(`${dir}/current_link_width`, width[0]);
    w(`${dir}/max_link_width`, width[1]);
  };
  pci('/sys/devices/pci0000:b0/0000:b0:01.0', ['16.0 GT/s PCIe', '16.0 GT/s PCIe'], ['16', '16']);
  pci('/sys/devices/pci0000:b0/0000:b0:01.0/0000:b1:00.0', ['2.5 GT/s PCIe', '32.0 GT/s PCIe'], ['16', '16']);
  link('/sys/bus/pci/devices/0000:b1:00.0', '../../../devices/pci0000:b0/0000:b0:01.0/0000:b1:00.0');
  pci('/sys/devices/pci0000:00/0000:00:06.0', ['32.0 GT/s PCIe', '32.0 GT/s PCIe'], ['16', '16']);
  link('/sys/bus/pci/devices/0000:00:06.0', '../../../devices/pci0000:00/0000:00:06.0');
  return { root, cleanup: () => fs.rmSync(root, { recursive: true, force: true }) };
}
