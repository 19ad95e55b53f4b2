// bench/device/gpu-check.sh up to the point where it needs the NVIDIA driver: the one device-tool
// call that checks issue #7 must end quickly, with its reason and a CRITERION line in $OUT/log.txt,
// when what it needs is missing. The carried Node is a wrapper around this Node, and the carried
// node_modules an empty folder (the sources it runs resolve koffi from the repository's own).

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { skippedBecause } from '../../support/skip.ts';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const hasXz = spawnSync('xz', ['--version'], { stdio: 'ignore' }).status === 0;
const hasGpu = fs.existsSync('/dev/nvidiactl');

describe.skipIf(skippedBecause(!hasXz || hasGpu, hasGpu ? 'an NVIDIA device is here: the no-driver path cannot be shown' : 'no xz to pack the stand-in carry'))(
  'bench/device/gpu-check.sh without what it needs',
  () => {
    let dir: string | null = null;
    afterEach(() => {
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
      dir = null;
    });

    /** A working copy holding the script and the sources it runs, with or without a carry. */
    function workingCopy(withCarry: boolean): string {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvbench-gpu-check-'));
      const repo = path.join(dir, 'repo');
      fs.mkdirSync(path.join(repo, 'bench', 'device'), { recursive: true });
      fs.copyFileSync(path.join(repoRoot, 'bench/device/gpu-check.sh'), path.join(repo, 'bench/device/gpu-check.sh'));
      fs.symlinkSync(path.join(repoRoot, 'src-main'), path.join(repo, 'src-main'));
      if (withCarry) {
        const carry = path.join(repo, '.device-carry');
        fs.mkdirSync(path.join(dir, 'pack', 'node_modules'), { recursive: true });
        fs.writeFileSync(path.join(dir, 'pack', 'node_modules', '.keep'), '');
        fs.writeFileSync(path.join(dir, 'pack', 'node'), `#!/bin/sh\nexec '${process.execPath}' "$@"\n`);
        fs.mkdirSync(carry);
        expect(spawnSync('sh', ['-c', `xz -0 -c node > '${carry}/node.xz' && tar -cf - node_modules | xz -0 > '${carry}/node_modules.tar.xz'`], { cwd: path.join(dir, 'pack') }).status).toBe(0);
      }
      return repo;
    }

    function check(repo: string) {
      const out = path.join(dir!, 'out');
      const r = spawnSync('bash', [path.join(repo, 'bench/device/gpu-check.sh')], {
        encoding: 'utf8',
        timeout: 90_000,
        // As on the device machine: no Node on the PATH, no driver where the script looks.
        env: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: os.homedir(), OUT: out, KVBENCH_CUDA_LIBRARY: path.join(dir!, 'no-such-libcuda.so.1') },
      });
      const log = fs.existsSync(path.join(out, 'log.txt')) ? fs.readFileSync(path.join(out, 'log.txt'), 'utf8') : '';
      return { status: r.status, log, files: fs.existsSync(out) ? fs.readdirSync(out) : [] };
    }

    it('with no usable driver, stops at the preflight with the reason, and still ends on a CRITERION line', () => {
      const r = check(workingCopy(true));
      expect(r.status, r.log).toBe(2);
      expect(r.log).toMatch(/^node v24\.\d+\.\d+ at /m);
      expect(r.log).toMatch(/^STOP: the NVIDIA driver cannot be loaded or initialised/m);
      expect(r.log).toMatch(/no-such-libcuda\.so\.1: NOT usable: .*could not be loaded/);
      expect(r.log).toMatch(/^ {2}CRITERION gpu-copy: NOT MEASURED; no usable NVIDIA driver \(the preflight stopped the check: .*no-such-libcuda\.so\.1: NOT usable: /m);
      expect(r.files).toEqual(['log.txt']);
    });

    it('with nothing carried, says so and ends on a CRITERION line', () => {
      const r = check(workingCopy(false));
      expect(r.status, r.log).toBe(1);
      expect(r.log).toMatch(/^no .*\.device-carry: run bench\/device\/pack\.sh and carry it$/m);
      expect(r.log).toMatch(/^ {2}CRITERION gpu-copy: NOT MEASURED; nothing was carried: .*\.device-carry is missing$/m);
    });
  },
);
