// `kvbench report`'s tier comparison on a real database of imported runs: which rows get an
// efficiency, and what the notes say about those that do not.
import fs from 'node:fs';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterEach, describe, expect, it } from 'vitest';
import { exportCommand } from '../../../src-main/cli/export-command.ts';
import { reportCommand } from '../../../src-main/cli/report-command.ts';
import type { TierComparison } from '../../../src-main/export/report-model.ts';
import { openStore } from '../../../src-main/store/open-store.ts';
import type { Store } from '../../../src-main/store/store.ts';
import type { HardwareProfile } from '../../../src-shared/domain/hardware.ts';
import { fakeHardware, kvbenchResults, removeTempDirs, tempDir } from '../store/fixtures.ts';
import { addSuiteTrials } from '../store/seed-store.ts';
import { dbIn, importDrive } from '../export/drive-imports.ts';
import { runInProcess } from './in-process.ts';

afterEach(removeTempDirs);

async function reportOf(dir: string, ...args: string[]): Promise<{ text: string; tiers: TierComparison }> {
  const text = await runInProcess(() => reportCommand([...args, '--db', dbIn(dir)]));
  const json = await runInProcess(() => reportCommand([...args, '--json', '--db', dbIn(dir)]));
  expect(text.code, text.stderr).toBe(0);
  return { text: text.stdout, tiers: (JSON.parse(json.stdout) as { tiers: TierComparison }).tiers };
}

describe('kvbench report: tier comparison', () => {
  it('gives a row whose storage reads the page cache served no read efficiency, and says why instead of blaming the ceiling', async () => {
    const dir = tempDir();
    const store = openStore(dbIn(dir));
    let suite: number;
    try {
      // Buffered runs whose device read 0 % of what the storage tier read: 1.14 GB/s against a 1 GB/s datasheet.
      const ids = await importDrive(store, dir, 'B-buffered', [1, 2, 3].map((i) => ({ tokPerS: 600 + i, readBytesPerS: 1.14e9 + i, readCoverage: 0, options: { directIo: false } })));
      suite = store.getTrial(ids[0])!.suiteId;
    } finally {
      store.close();
    }
    const { text, tiers } = await reportOf(dir, '--suite', String(suite), '--stated-read-gbps', '1', '--stated-write-gbps', '1');
    expect(tiers.rows).toHaveLength(1);
    expect(tiers.rows[0].storageReadEfficiency).toBeNull();
    // The write efficiency stands: it is the reads the page cache served.
    expect(tiers.rows[0].storageWriteEfficiency).not.toBeNull();
    expect(tiers.notes).toContain('1 row(s): the page cache served storage reads (storage-only: 3 of 3 trial(s)): their read numbers describe RAM, not the drive, so no read efficiency there');
    expect(tiers.notes.join('\n')).not.toMatch(/ceiling is too low/);
    expect(text).toMatch(/^storage-only .* 1\.14 GB\/s\s+—\s+\S+%$/m);
  });

  /** A suite of three storage-only trials on `hw` (its probe stored with them); `ramBacked`: their cache directory was. */
  const suiteOn = (store: Store, hw: HardwareProfile, ramBacked: boolean): number =>
    addSuiteTrials(store, hw, 3, (i, options) => {
      const r = kvbenchResults({ tokPerS: 1000 + i, durationS: Number(options.duration) });
      r.kvbench.tiers.storage.ram_backed = ramBacked;
      return { results: r as unknown as Record<string, unknown> };
    });

  it('says why a probe that ran has no read limit, instead of "no bandwidth probe"', async () => {
    const dir = tempDir();
    const store = openStore(dbIn(dir));
    let onDisk: number;
    let onRam: number;
    try {
      // A disk whose probe's reads the page cache may have served: its write limit stands.
      const disk = fakeHardware({ probe: true });
      disk.cacheDir!.bandwidth = { ...disk.cacheDir!.bandwidth!, readBytesPerSec: null, pageCacheSuspected: true };
      onDisk = suiteOn(store, disk, false);
      // A loop device on tmpfs (rev7's drive A): the probe ran, its read phase was refused as memory.
      const ram = fakeHardware({ probe: true, systemId: 'sys-fedcba9876543210', hostname: 'lab2' });
      ram.cacheDir!.bandwidth = { ...ram.cacheDir!.bandwidth!, readBytesPerSec: null, pageCacheSuspected: true };
      ram.cacheDir!.blockDevice = { name: 'loop0', disks: ['loop0'], model: null, serial: null, wwid: null, rotational: null, logicalBlockBytes: 512, physicalBlockBytes: 512, sizeBytes: 3 * 1024 ** 3, media: 'ram', backingFile: '/dev/shm/a.img', backingFilesystem: 'tmpfs' };
      onRam = suiteOn(store, ram, true);
    } finally {
      store.close();
    }
    const disk = await reportOf(dir, '--suite', String(onDisk));
    expect(disk.tiers.notes).toContain(
      "1 row(s): the drive was probed, but the page cache may have served the probe's reads: no read limit, so no read efficiency there (state the drive's read bandwidth: kvbench report --stated-read-gbps)",
    );
    expect(disk.tiers.notes.join('\n')).not.toMatch(/no bandwidth probe/);
    expect(disk.tiers.rows[0].storageWriteEfficiency).not.toBeNull();
    expect(disk.text).toMatch(/^Limits: drive sequential read — \(the page cache may have served the probe's reads\), write 1\.50 GB\/s/m);

    const ram = await reportOf(dir, '--suite', String(onRam));
    // Its rows are RAM-backed: that note says why they have no efficiency, and nothing says the drive was not probed.
    expect(ram.tiers.notes.join('\n')).not.toMatch(/no bandwidth probe|no read limit/);
    expect(ram.tiers.notes.some((n) => n.includes('RAM-backed'))).toBe(true);
    expect(ram.tiers.probe.readNote).toBe("the probe's reads came from memory (loop0 on tmpfs is RAM-backed)");
    expect(ram.text).toContain("Limits: drive sequential read — (the probe's reads came from memory (loop0 on tmpfs is RAM-backed)), write 1.50 GB/s");
  });

  it('describes every configuration by the options that set it apart, so rows kept apart never read alike', async () => {
    const dir = tempDir();
    const store = openStore(dbIn(dir));
    try {
      await importDrive(store, dir, 'A-first', [{ tokPerS: 100 }, { tokPerS: 101 }]);
      await importDrive(store, dir, 'B-buffered', [{ tokPerS: 90, options: { directIo: 'off' } }]);
      await importDrive(store, dir, 'B-other', [{ tokPerS: 30, options: { maxConcurrentAllocs: 2, disableMultiTurn: true, ioDepth: 4, fsyncPolicy: 'none' } }]);
      // An autoscaler interval acts only with autoscaling: elsewhere it neither keys nor labels the run.
      await importDrive(store, dir, 'B-quiet', [{ tokPerS: 95, options: { autoscalerInterval: 1, datasetPath: '/data/sets/sharegpt.json' } }]);
    } finally {
      store.close();
    }
    const { tiers } = await reportOf(dir, '--system', 'rig');
    expect(tiers.rows.map((r) => `${r.driveLabel}: ${r.configDescription}`).sort()).toEqual([
      'A-first: tiny-1b, 4 users, 4 s, CPU 0 GiB, GPU 0 GiB, generation none, storage 1 GiB, warm-up 1',
      'B-buffered: tiny-1b, 4 users, 4 s, CPU 0 GiB, GPU 0 GiB, generation none, storage 1 GiB, warm-up 1, direct-io off',
      'B-other: tiny-1b, 4 users, 4 s, CPU 0 GiB, GPU 0 GiB, generation none, storage 1 GiB, max-concurrent-allocs 2, disable-multi-turn, warm-up 1, io-depth 4, fsync-policy none',
      'B-quiet: tiny-1b, 4 users, 4 s, CPU 0 GiB, GPU 0 GiB, generation none, storage 1 GiB, dataset-path sharegpt.json, warm-up 1',
    ]);
  });

  it('the XLSX tier comparison carries each row\'s users and configuration, as the terminal table does', async () => {
    const dir = tempDir();
    const store = openStore(dbIn(dir));
    try {
      // rev7: two autoscale rows on one drive (a qos run of llama3.1-8b, a capacity run of tiny-1b) read alike in the sheet.
      const auto = { enableAutoscaling: true, autoscalerInterval: 1, warmUp: 0, numUsers: 2 };
      await importDrive(store, dir, 'B-disk', [{ tokPerS: 300, options: { ...auto, model: 'llama3.1-8b', duration: 10, autoscalerMode: 'qos' } }], 'autoscale');
      await importDrive(store, dir, 'B-disk', [{ tokPerS: 600, options: { ...auto, duration: 12, autoscalerMode: 'capacity' } }], 'autoscale');
    } finally {
      store.close();
    }
    const out = path.join(dir, 'rig.xlsx');
    const r = await runInProcess(() => exportCommand(['--system', 'rig', '--out', out, '--db', dbIn(dir)]));
    expect(r.code, r.stderr).toBe(0);
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(out);
    const ws = wb.getWorksheet('Tier comparison')!;
    const head = (ws.getRow(1).values as unknown[]).slice(1) as string[];
    const rows = [2, 3].map((i) => Object.fromEntries(head.map((h, c) => [h, ws.getRow(i).getCell(c + 1).value])));
    const { tiers } = await reportOf(dir, '--system', 'rig');
    expect(rows.map((x) => [x.users, x.config_key, x.configuration])).toEqual(tiers.rows.map((t) => [2, t.configKey, t.configDescription]));
    expect(new Set(rows.map((x) => x.configuration)).size).toBe(2);
    expect(rows.map((x) => x.configuration)).toContain('llama3.1-8b, 2 users, 10 s, CPU 0 GiB, GPU 0 GiB, generation none, storage 1 GiB, autoscaling qos, autoscaler-interval 1');
  });

  it('flags a RAM-backed trial by what held it in memory, never as tmpfs or ramfs alone (a loop device on tmpfs is neither)', async () => {
    const dir = tempDir();
    const store = openStore(dbIn(dir));
    try {
      await importDrive(store, dir, 'A-first', [{ tokPerS: 300, ramBacked: true, ramBacking: 'loop0 → /dev/shm/d.img on tmpfs' }]);
    } finally {
      store.close();
    }
    const caution = 'the cache directory was RAM-backed (loop0 → /dev/shm/d.img on tmpfs): its storage numbers describe memory, not a drive';
    const { text, tiers } = await reportOf(dir, '--system', 'rig');
    expect(text).toContain(`FLAGGED: ${caution}`);
    expect(text).not.toContain('tmpfs or ramfs');
    expect(tiers.notes).toContain('1 row(s) ran on a RAM-backed cache directory (loop0 → /dev/shm/d.img on tmpfs): no storage efficiency there');
    const out = path.join(dir, 'rig.csv');
    expect((await runInProcess(() => exportCommand(['--system', 'rig', '--out', out, '--db', dbIn(dir)]))).code).toBe(0);
    expect(fs.readFileSync(out, 'utf8')).toContain(caution);
  });
});
