// Runs the real `kvbench` command (bin/kvbench.js) as a child process, as a user would, and
// inspects what it leaves behind. Shared by the CLI integration tests; not a test file itself.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RunResults } from '../../../src-shared/domain/results.ts';

export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const KVBENCH_BIN = path.join(REPO_ROOT, 'bin', 'kvbench.js');
export const GIB = 1024 ** 3;

/** The flags every test run shares: the smallest model, no GPU tier, no simulated generation. */
export const TINY_RUN_FLAGS = ['--model', 'tiny-1b', '--gpu-mem-gb', '0', '--generation-mode', 'none'] as const;

/** 256 bytes per token: the largest synthetic context (25 000 tokens) is a 6.1 MiB entry. */
export const ONE_LAYER_BYTES_PER_TOKEN = 256;

/**
 * TINY_RUN_FLAGS with a one-layer model (written to a config file in `dir`), for tests that need
 * many requests rather than many bytes: tiny-1b's entries reach 0.57 GiB.
 */
export function oneLayerRunFlags(dir: string, moreConfigYaml = ''): string[] {
  const config = path.join(dir, 'one-layer-model.yaml');
  fs.writeFileSync(config, `model_configs:\n  one-layer:\n    num_layers: 1\n    hidden_dim: 64\n    num_heads: 1\n    kv_heads: 1\n${moreConfigYaml}`);
  return ['--config', config, '--model', 'one-layer', '--gpu-mem-gb', '0', '--generation-mode', 'none'];
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  wallMs: number;
}

/** A started CLI process and the promise of its end. */
export interface CliProcess {
  child: ChildProcess;
  pid: number;
  done: Promise<CliResult>;
  /** Everything written to stderr so far. */
  stderrSoFar(): string;
}

/**
 * The environment of the child: this one without anything that could redirect Node or the engine
 * (a test-runner loader in NODE_OPTIONS, a fake engine module).
 */
export function cliEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  delete env.KVBENCH_ENGINE_MODULE;
  return env;
}

export interface StartCliOptions {
  cwd: string;
  env?: Record<string, string>;
  /** The Node that runs bin/kvbench.js: this one (24: the tests run under it) unless given. */
  node?: string;
  /** In a process group of its own, which `hangUp` signals as a shell does its job's when the terminal goes. */
  ownProcessGroup?: boolean;
  /** Another user to run as (test/support/unprivileged.ts): root passes every permission check. */
  runAs?: { uid: number; gid: number } | null;
}

/** Starts `node bin/kvbench.js <args>`. */
export function startCli(args: readonly string[], opts: StartCliOptions): CliProcess {
  const startedMs = performance.now();
  const node = opts.node ?? process.execPath;
  const child = spawn(node, [KVBENCH_BIN, ...args], {
    cwd: opts.cwd,
    env: { ...cliEnv(), ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: opts.ownProcessGroup ?? false,
    ...(opts.runAs ?? {}),
  });
  if (child.pid === undefined) throw new Error(`could not start ${node} ${KVBENCH_BIN}`);
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (s: string) => (stdout += s));
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  const done = new Promise<CliResult>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr, wallMs: performance.now() - startedMs }));
  });
  return { child, pid: child.pid, done, stderrSoFar: () => stderr };
}

export function runCli(args: readonly string[], opts: StartCliOptions): Promise<CliResult> {
  return startCli(args, opts).done;
}

/** A fresh directory under the OS temp dir; `removeTempDirs` deletes every one made so far. */
const tempDirs: string[] = [];
export function makeTempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvb-cli-'));
  tempDirs.push(dir);
  return dir;
}
export function removeTempDirs(): void {
  for (const dir of tempDirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
}

/** Every path under `dir` (relative, sorted), with each file's size and content hash, for before/after comparisons. */
export function snapshotDir(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string): void => {
    for (const ent of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const r = path.join(rel, ent.name);
      const abs = path.join(dir, r);
      if (ent.isDirectory()) {
        out[`${r}/`] = 'dir';
        walk(r);
      } else {
        const st = fs.statSync(abs);
        out[r] = `${st.size} bytes, mtime ${st.mtimeMs}, ${Buffer.from(fs.readFileSync(abs)).toString('base64').slice(0, 64)}`;
      }
    }
  };
  walk('');
  return out;
}

/** A cache directory holding one foreign file the benchmark must never touch (the reference deletes *.npy). */
export function cacheDirWithForeignFile(parent: string): { cacheDir: string; foreign: string; foreignBytes: Buffer } {
  const cacheDir = path.join(parent, 'cache');
  fs.mkdirSync(cacheDir);
  const foreign = path.join(cacheDir, 'keep.npy');
  const foreignBytes = Buffer.from(`not kvbench's: ${Math.random()}\n`.repeat(100));
  fs.writeFileSync(foreign, foreignBytes);
  return { cacheDir, foreign, foreignBytes };
}

export function readResults(file: string): RunResults {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as RunResults;
}

/** Names in `dir` that a kvbench run creates (its run directories). */
export function runDirsIn(dir: string): string[] {
  return fs.readdirSync(dir).filter((n) => n.startsWith('kvbench-run-'));
}

/** Direct children of `pid` (Linux: pgrep -P). */
export function childPids(pid: number): number[] {
  try {
    return execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' })
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map(Number);
  } catch {
    return []; // pgrep exits 1 when there is no child
  }
}

function commandLine(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

/**
 * The engine process under the CLI `pid`: its child running engine-process.ts. (Under a Node older
 * than 24, bin/kvbench.js re-runs itself with Node 24, so look one level further down too.)
 */
export async function waitForEnginePid(pid: number, timeoutMs = 20_000): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    const queue = [pid];
    for (let depth = 0; depth < 3 && queue.length > 0; depth++) {
      const next: number[] = [];
      for (const p of queue) {
        for (const c of childPids(p)) {
          if (commandLine(c).includes('engine-process.ts')) return c;
          next.push(c);
        }
      }
      queue.splice(0, queue.length, ...next);
    }
    await sleepMs(50);
  }
  throw new Error(`no engine process appeared under pid ${pid} within ${timeoutMs} ms`);
}

export async function waitFor(what: string, predicate: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!predicate()) {
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleepMs(25);
  }
}

export function sleepMs(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** True when `pid` is still a live process. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * After a test: kills every CLI it started that still runs (a failed test must not leave a benchmark
 * writing into a directory about to be removed; its engine notices the lost parent and stops).
 */
export async function killStarted(started: CliProcess[]): Promise<void> {
  for (const cli of started.splice(0)) {
    if (isAlive(cli.pid)) {
      process.kill(cli.pid, 'SIGKILL');
      await cli.done.catch(() => undefined);
    }
  }
}

/**
 * What a dropped SSH session does to a command running in it: the shell sends SIGHUP to the job's
 * whole process group, the CLI, its engine or probe child, and bin/kvbench.js's wrapper if there is one.
 * The CLI must have been started with `ownProcessGroup`.
 */
export function hangUp(cli: CliProcess): void {
  process.kill(-cli.pid, 'SIGHUP');
}

/** A Node older than 24 on this machine (the system's), with which bin/kvbench.js re-runs itself on Node 24; null if none. */
export function olderNode(): string | null {
  for (const node of ['/usr/bin/node', '/usr/local/bin/node']) {
    try {
      const major = Number(execFileSync(node, ['-p', 'process.versions.node.split(".")[0]'], { encoding: 'utf8' }).trim());
      if (major < 24) return node;
    } catch {
      // not there
    }
  }
  return null;
}

/** For failure messages: the CLI's stderr, which holds kvbench's own explanation. */
export function explain(r: CliResult): string {
  return `exit ${r.code} signal ${r.signal} after ${Math.round(r.wallMs)} ms\n--- stderr ---\n${r.stderr}`;
}
