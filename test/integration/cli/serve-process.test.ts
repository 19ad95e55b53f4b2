// `kvbench serve` as a process. On a headless server it runs in an SSH session; when the session
// drops, the server is hung up (SIGHUP). It must stop as on Ctrl-C: the running suite is cancelled gracefully, the current
// trial's partial results are stored, and it exits 129 (128 + SIGHUP). SIGHUP's default action used
// to end it at once, leaving the trial and suite `running` and the results lost.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../../src-main/store/sqlite.ts';
import { KVBENCH_BIN, REPO_ROOT, childPids, cliEnv, explain, hangUp, isAlive, killStarted, makeTempDir, olderNode, removeTempDirs, runDirsIn, sleepMs, startCli, waitFor, type CliProcess } from './cli-harness.ts';

const TOKEN = 'c0'.repeat(16);

const started: CliProcess[] = [];
const others: number[] = [];
afterEach(async () => {
  await killStarted(started);
  for (const pid of others.splice(0)) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
  removeTempDirs();
});

interface ServeDirs {
  tmp: string;
  db: string;
  cache: string;
  args: string[];
}

/** serve's arguments over a temp database, settings file and a stand-in renderer (the page is not under test). */
function serveDirs(): ServeDirs {
  const tmp = makeTempDir();
  const renderer = path.join(tmp, 'renderer');
  fs.mkdirSync(renderer);
  fs.writeFileSync(path.join(renderer, 'index.html'), '<!doctype html><title>kvbench</title>');
  const cache = path.join(tmp, 'cache');
  fs.mkdirSync(cache);
  const db = path.join(tmp, 'kvbench.db');
  return { tmp, db, cache, args: ['serve', '--port', '0', '--db', db, '--settings', path.join(tmp, 'settings.json'), '--renderer', renderer] };
}

async function invoke(origin: string, channel: string, body: unknown): Promise<{ ok: boolean; value?: unknown; error?: { code: string; message: string } }> {
  const r = await fetch(`${origin}/api/invoke/${channel}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  return (await r.json()) as { ok: boolean; value?: unknown };
}

/** Starts a one-trial storage-only suite through the API and waits until its trial measures. */
async function startSuiteAndWaitForTrial(origin: string, cache: string): Promise<void> {
  const start = await invoke(origin, 'suite.start', { cacheDir: cache, profile: 'smoke', trials: 1, durationS: 30, probe: false, scenarios: ['storage-only'] });
  expect(start, JSON.stringify(start)).toMatchObject({ ok: true });
  let measuring = false;
  await waitFor(
    'the trial to measure',
    () => {
      invoke(origin, 'suite.status', {})
        .then((s) => {
          const events = (s.value as { events?: { type: string; progress?: { phase: string } }[] } | undefined)?.events ?? [];
          measuring ||= events.some((e) => e.type === 'suite.trialProgressed' && e.progress?.phase === 'running');
        })
        .catch(() => {}); // a poll still in flight when the server stops
      return measuring;
    },
    60_000,
  );
}

function storedRows(db: string): { trials: { status: string; status_reason: string | null }[]; suites: { status: string }[] } {
  const d = openDatabase(db, { readonly: true, fileMustExist: true });
  try {
    return {
      trials: d.prepare('SELECT status, status_reason FROM trials ORDER BY id').all() as { status: string; status_reason: string | null }[],
      suites: d.prepare('SELECT status FROM suites ORDER BY id').all() as { status: string }[],
    };
  } finally {
    d.close();
  }
}

function expectStoppedGracefully(dirs: ServeDirs): void {
  const { trials, suites } = storedRows(dirs.db);
  expect(trials).toHaveLength(1);
  expect(trials[0].status).toBe('aborted');
  expect(trials[0].status_reason).toMatch(/partial results kept/);
  expect(suites.map((s) => s.status)).toEqual(['cancelled']);
  expect(runDirsIn(dirs.cache)).toEqual([]);
}

describe('kvbench serve, hung up', () => {
  it('SIGHUP to its process group (server and engine, as a shell sends it) stops the suite gracefully and exits 129', { timeout: 90_000 }, async () => {
    const dirs = serveDirs();
    const cli = startCli(dirs.args, { cwd: dirs.tmp, env: { KVBENCH_SERVE_TOKEN: TOKEN }, ownProcessGroup: true });
    started.push(cli);
    let out = '';
    cli.child.stdout!.on('data', (s: string | Buffer) => (out += String(s)));
    await waitFor('the URL', () => /open (http:\S+)\/\?token=/.test(out), 30_000);
    const origin = /open (http:\S+)\/\?token=/.exec(out)![1];
    expect(cli.stderrSoFar(), 'the token came from KVBENCH_SERVE_TOKEN: no warning').not.toMatch(/--token/);
    await startSuiteAndWaitForTrial(origin, dirs.cache);

    hangUp(cli);
    const r = await cli.done;
    expect(r.code, explain(r)).toBe(129);
    expect(r.stderr).toMatch(/SIGHUP: stopping the running suite/);
    expectStoppedGracefully(dirs);
  });

  // The real thing: the server runs in a terminal (script(1) gives it one), and the terminal goes away.
  // The kernel hangs the server up, and every write to the gone terminal then fails with EIO.
  it.skipIf(!fs.existsSync('/usr/bin/script'))('in a terminal that goes away (a dropped SSH session) it stops the suite gracefully too, its log writes failing quietly', { timeout: 90_000 }, async () => {
    const dirs = serveDirs();
    const command = [process.execPath, KVBENCH_BIN, ...dirs.args].map((a) => `'${a}'`).join(' ');
    const env: NodeJS.ProcessEnv = { ...process.env, KVBENCH_SERVE_TOKEN: TOKEN, SHELL: '/bin/sh' };
    delete env.NODE_OPTIONS;
    delete env.KVBENCH_ENGINE_MODULE;
    const terminal = spawn('script', ['-qfec', `exec ${command}`, '/dev/null'], { cwd: dirs.tmp, env, stdio: ['pipe', 'pipe', 'pipe'] });
    others.push(terminal.pid!);
    let out = '';
    terminal.stdout!.on('data', (s: string | Buffer) => (out += String(s)));
    await waitFor('the URL', () => /open (http:\S+)\/\?token=/.test(out), 30_000);
    const origin = /open (http:\S+)\/\?token=/.exec(out)![1];
    const [server] = childPids(terminal.pid!);
    expect(server).toBeGreaterThan(0);
    others.push(server);
    await startSuiteAndWaitForTrial(origin, dirs.cache);

    terminal.kill('SIGKILL'); // the terminal's other end closes: a hang-up
    await waitFor('the server to exit', () => !isAlive(server), 60_000);
    expectStoppedGracefully(dirs);
  });
});

describe('kvbench serve --token', () => {
  it('warns that a token on the command line is readable by every user of the machine, and points to KVBENCH_SERVE_TOKEN', { timeout: 60_000 }, async () => {
    const dirs = serveDirs();
    const cli = startCli([...dirs.args, '--token', TOKEN], { cwd: dirs.tmp });
    started.push(cli);
    await waitFor('the warning', () => /warn: --token/.test(cli.stderrSoFar()), 30_000);
    expect(cli.stderrSoFar()).toMatch(/kvbench serve: warn: --token is on the command line, which every user of this machine can read \(ps, \/proc\/PID\/cmdline\).*: give the token in KVBENCH_SERVE_TOKEN instead\n/);
    process.kill(cli.pid, 'SIGTERM');
    const r = await cli.done;
    expect(r.code, explain(r)).toBe(143);
    expect(r.stdout).toContain(`?token=${TOKEN}`);
  });
});

describe('kvbench serve on another loopback address', () => {
  it('prints a URL and an SSH hint for that address (not 127.0.0.1, where nothing listens)', { timeout: 60_000 }, async () => {
    const dirs = serveDirs();
    const cli = startCli([...dirs.args, '--host', '127.0.0.2'], { cwd: dirs.tmp, env: { KVBENCH_SERVE_TOKEN: TOKEN } });
    started.push(cli);
    await waitFor('the hint', () => /headless\?/.test(cli.stderrSoFar()), 30_000);
    const port = /ssh -L (\d+):/.exec(cli.stderrSoFar())![1];
    expect(cli.stderrSoFar()).toContain(`headless? ssh -L ${port}:127.0.0.2:${port} <this server>`);
    process.kill(cli.pid, 'SIGTERM');
    const r = await cli.done;
    expect(r.stdout).toBe(`kvbench serve: open http://127.0.0.2:${port}/?token=${TOKEN}\n`);
  });
});

/** The npx on PATH (npm's), or null. */
function findNpx(): string | null {
  try {
    return execFileSync('sh', ['-c', 'command -v npx'], { encoding: 'utf8' }).trim() || null;
  } catch {
    return null;
  }
}

/** Every process under `pid`. */
function descendants(pid: number): number[] {
  return childPids(pid).flatMap((c) => [c, ...descendants(c)]);
}

function commandOf(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

interface Starter {
  pid: number;
  url: string;
  /** The processes it started (its shell, kvbench, the engine where one runs). */
  under: number[];
  stderr(): string;
}

/** Starts `command` in a session of its own, as a terminal's or a supervisor's job is, and waits for serve's URL. */
async function startServeUnder(command: string, args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<Starter> {
  const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  others.push(child.pid!);
  let out = '';
  let err = '';
  child.stdout!.on('data', (s: string | Buffer) => (out += String(s)));
  child.stderr!.on('data', (s: string | Buffer) => (err += String(s)));
  await waitFor('the URL', () => /open (http:\S+)\/\?token=/.test(out), 60_000).catch((e: Error) => {
    throw new Error(`${e.message}\n--- stderr ---\n${err}`);
  });
  const under = descendants(child.pid!);
  others.push(...under);
  return { pid: child.pid!, url: /open (http:\S+)\/\?token=/.exec(out)![1], under, stderr: () => err };
}

/** SIGTERM to the starter's pid alone; every process it started must end, and the port close. */
async function terminateStarterAlone(s: Starter): Promise<void> {
  const under = s.under.filter(isAlive); // an engine that ran a finished trial is gone already
  process.kill(s.pid, 'SIGTERM');
  await waitFor('every process it started to exit', () => under.every((p) => !isAlive(p)), 60_000).catch((e: Error) => {
    throw new Error(`${e.message}: still running ${under.filter(isAlive).map(commandOf).join(' | ')}\n--- stderr ---\n${s.stderr()}`);
  });
  await expect(fetch(`${s.url}/`)).rejects.toThrow();
  expect(s.stderr()).toMatch(/kvbench: npm, which started it \(npx, npm run\), has gone: stopping as on SIGTERM/);
}

// `npx kvbench serve` is npm → sh -c → kvbench. A SIGTERM to npx's pid alone (`kill PID`, a supervisor
// signalling the process it started) ends npm, which passes it to its shell, which it ends without
// passing it on: kvbench used to run on, orphaned, keeping its port and its running suite.
const npx = findNpx();
describe.skipIf(npx === null)('kvbench serve started by npm, SIGTERM to npm alone', () => {
  it('npx kvbench serve: the server stops its running suite gracefully and exits, and the port closes', { timeout: 120_000 }, async () => {
    const dirs = serveDirs();
    const env: NodeJS.ProcessEnv = {
      ...cliEnv(),
      KVBENCH_SERVE_TOKEN: TOKEN,
      // The local package is linked from a cache of this test's own, without the network.
      npm_config_cache: path.join(dirs.tmp, 'npm-cache'),
      npm_config_offline: 'true',
      npm_config_yes: 'true',
      npm_config_update_notifier: 'false',
    };
    const s = await startServeUnder(npx!, ['kvbench', ...dirs.args], env, REPO_ROOT);
    expect(s.under.length, `npm's processes: ${s.under.map(commandOf).join(' | ')}`).toBeGreaterThanOrEqual(2);
    await startSuiteAndWaitForTrial(s.url, dirs.cache);

    await terminateStarterAlone(s);
    expect(s.stderr()).toMatch(/SIGTERM: stopping the running suite/);
    expectStoppedGracefully(dirs);
  });

  // Under an older Node, bin/kvbench.js re-runs itself on Node 24 and outlives npm's shell: the real
  // kvbench watches the wrapper's parent. (npx in this checkout runs Node 24 from node_modules/.bin, so
  // the shell npm starts is stood in for here: a shell with npm's environment.)
  const node20 = olderNode();
  it.skipIf(node20 === null)('through the re-exec wrapper on an older Node: npm\'s shell going stops the real kvbench too', { timeout: 60_000 }, async () => {
    const dirs = serveDirs();
    const command = [node20!, KVBENCH_BIN, ...dirs.args].map((a) => `'${a}'`).join(' ');
    const env: NodeJS.ProcessEnv = { ...cliEnv(), KVBENCH_SERVE_TOKEN: TOKEN, npm_lifecycle_event: 'npx', npm_command: 'exec' };
    // `; exit`: the shell waits for kvbench rather than becoming it, as npm's `sh -c` does.
    const s = await startServeUnder('sh', ['-c', `${command}; exit $?`], env, dirs.tmp);
    expect(s.under.map(commandOf).filter((c) => c.includes('kvbench.js')), 'the wrapper and the real kvbench').toHaveLength(2);

    await terminateStarterAlone(s);
  });

  for (const [how, npmEnv, prefix] of [
    ['a kvbench npm did not start (no npm_lifecycle_event)', false, ''],
    ['a kvbench detached from npm\'s shell on purpose (setsid: a session of its own)', true, 'setsid '],
  ] as const) {
    it.skipIf(prefix !== '' && !fs.existsSync('/usr/bin/setsid'))(`${how} is left running when that shell goes, as before`, { timeout: 60_000 }, async () => {
      const dirs = serveDirs();
      const command = [process.execPath, KVBENCH_BIN, ...dirs.args].map((a) => `'${a}'`).join(' ');
      const env: NodeJS.ProcessEnv = { ...cliEnv(), KVBENCH_SERVE_TOKEN: TOKEN };
      for (const k of Object.keys(env)) if (k.startsWith('npm_')) delete env[k];
      if (npmEnv) Object.assign(env, { npm_lifecycle_event: 'npx', npm_command: 'exec' });
      const s = await startServeUnder('sh', ['-c', `${prefix}${command}; exit $?`], env, dirs.tmp);
      process.kill(s.pid, 'SIGTERM');
      await waitFor('the shell to exit', () => !isAlive(s.pid), 30_000);
      await sleepMs(2500); // more than a poll of a watch that must not be there
      expect(s.under.every(isAlive), s.stderr()).toBe(true);
      expect((await fetch(`${s.url}/`)).status, 'the page is still served').toBe(200);
    });
  }
});
