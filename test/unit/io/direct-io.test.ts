import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freeSpaceBytes, probeDirectIo } from '../../../src-main/engine/io/direct-io.ts';

const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvb-io-'));
afterAll(() => fs.rmSync(tmpDir, { recursive: true, force: true }));

describe('probeDirectIo', () => {
  it('finds direct I/O on /tmp (ext4 here) and leaves no file behind', async () => {
    const probe = await probeDirectIo(tmpDir);
    expect(probe).toMatchObject({ supported: true, reason: null });
    expect([512, 1024, 2048, 4096]).toContain(probe.logicalBlockBytes);
    expect(fs.readdirSync(tmpDir)).toEqual([]);
  });

  it('throws, rather than reporting "unsupported", for a directory that does not exist', async () => {
    await expect(probeDirectIo(path.join(tmpDir, 'missing'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('reports a filesystem without O_DIRECT, when one can be mounted here', async (ctx) => {
    // tmpfs refused O_DIRECT before Linux 6.6; on newer kernels this only checks the probe cleans up.
    const mnt = path.join(tmpDir, 'tmpfs');
    fs.mkdirSync(mnt);
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', mnt], { stdio: 'pipe' });
    } catch (err) {
      ctx.skip(`cannot mount a tmpfs here (${(err as Error).message.split('\n')[0]})`);
    }
    try {
      const probe = await probeDirectIo(mnt);
      if (probe.supported) expect(probe.reason).toBeNull();
      else expect(probe.reason).toMatch(/O_DIRECT/);
      expect(fs.readdirSync(mnt)).toEqual([]);
    } finally {
      execFileSync('umount', [mnt]);
    }
  });
});

describe('freeSpaceBytes', () => {
  it('reports a plausible positive number', async () => {
    const free = await freeSpaceBytes(tmpDir);
    expect(free).toBeGreaterThan(0);
    expect(Number.isSafeInteger(free)).toBe(true);
  });
});
