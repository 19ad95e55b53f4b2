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
      for (const f of ['gpu-check.sh', 'nvidia-smi-watch.sh']) fs.copyFileSync(path.join(repoRoot, 'bench/device', f), path.join(repo, 'bench/device', f));
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

// The part of gpu-check.sh that runs beside the bench, on a stand-in nvidia-smi: its row "during the
// bench" must be taken inside a short bench (the H200's took 29 s; a row due 30 s in never came), or
// the log must say it was not; dmon's samples are labelled as what they are.
describe('bench/device/nvidia-smi-watch.sh (nvidia-smi beside the bench)', () => {
  let dir: string | null = null;
  afterEach(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
    dir = null;
  });

  function watch(script: string): { stdout: string; csv: string } {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvbench-smi-watch-'));
    const bin = path.join(dir, 'bin');
    fs.mkdirSync(bin);
    fs.writeFileSync(
      path.join(bin, 'nvidia-smi'),
      [
        '#!/bin/sh',
        'case "$*" in',
        '  *dmon*) echo "# gpu  rxpci  txpci"; while :; do echo "    0  51000  250"; sleep 1; done ;;',
        '  *--query-gpu*) echo "2026/11/25 13:26:17.000, Stand-in GPU, 5, 5, 5, 16, 16, Default, Enabled, 1 MiB, 143771 MiB" ;;',
        'esac',
      ].join('\n'),
      { mode: 0o755 },
    );
    const out = path.join(dir, 'out');
    fs.mkdirSync(out);
    const r = spawnSync('bash', ['-c', `set -uo pipefail; . '${path.join(repoRoot, 'bench/device/nvidia-smi-watch.sh')}'; ${script}`], {
      encoding: 'utf8',
      timeout: 30_000,
      env: { PATH: `${bin}:/usr/local/bin:/usr/bin:/bin`, OUT: out, work: dir },
    });
    expect(r.status, r.stderr).toBe(0);
    return { stdout: r.stdout, csv: fs.readFileSync(path.join(out, 'nvidia-smi.csv'), 'utf8') };
  }

  it('takes the during-bench row once it is due, and labels dmon as 20 ms snapshots of raw PCIe traffic', () => {
    const r = watch('smi_csv_start; smi_watch_start 1; sleep 2.2; smi_watch_stop; smi_row after-bench; smi_csv_print');
    expect(r.csv.split('\n').filter(Boolean).map((l) => l.split(',')[0])).toEqual(['when', 'idle', 'during-bench', 'after-bench']);
    expect(r.stdout).not.toMatch(/not taken/);
    expect(r.stdout).toContain(
      "nvidia-smi dmon -s t during the bench: PCIe rx/tx in MB/s, each a 20 ms NVML snapshot taken once a second (raw PCIe traffic, protocol overhead included: not comparable with the bench's payload GB/s):",
    );
    expect(r.stdout).toMatch(/^ {2} {4}0 {2}51000 {2}250$/m);
    expect(r.stdout).toContain('nvidia-smi.csv (idle, during-bench, after-bench):');
  });

  it('says the during-bench row was not taken when the bench ended before it was due', () => {
    const r = watch('smi_csv_start; smi_watch_start 5; sleep 0.2; smi_watch_stop; smi_row after-bench; smi_csv_print');
    expect(r.stdout).toContain('nvidia-smi during-bench row: not taken (the bench ended within 5 s, before it was due)');
    expect(r.csv.split('\n').filter(Boolean).map((l) => l.split(',')[0])).toEqual(['when', 'idle', 'after-bench']);
    expect(r.stdout).toContain('nvidia-smi.csv (idle, after-bench):');
  });
});
