// `kvbench serve` as a process. On a headless server it runs in an SSH session; when the session
// drops, the server is hung up (SIGHUP). It must stop as on Ctrl-C: the running suite is cancelled gracefully, the current
// trial's partial results are stored, and it exits 129 (128 + SIGHUP). SIGHUP's default action used
// to end it at once, leaving the trial and suite `running` and the results lost.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../../src-main/store/sqlite.ts';
import { KVBENCH_BIN, childPids, explain, hangUp, isAlive, killStarted, makeTempDir, removeTempDirs, runDirsIn, startCli, waitFor, type CliProcess } from './cli-harness.ts';

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
