// The end-to-end harness: a real `kvbench serve` (bin/kvbench.js, real database, real engine) on a
// free port, and Debian's Chromium driven by playwright-core.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { REPO_ROOT } from './build-renderer.ts';

export const CHROMIUM = '/usr/bin/chromium';
export const HAS_CHROMIUM = fs.existsSync(CHROMIUM);
export const SCREENSHOT_DIR = path.join(REPO_ROOT, 'out', 'e2e-screenshots');

/** Node 24 (the tests normally run under it; bin/kvbench.js would otherwise re-spawn itself, and a signal to the wrapper would not reach the server). */
function nodeBinary(): string {
  if (Number(process.versions.node.split('.')[0]) >= 24) return process.execPath;
  return path.join(REPO_ROOT, 'node_modules', 'node', 'bin', 'node');
}

export interface Served {
  child: ChildProcess;
  /** With the token: what a person opens. */
  url: string;
  origin: string;
  token: string;
  dir: string;
  db: string;
  output(): string;
  stop(): Promise<number | null>;
  /** SIGKILL to the server's process group (its engines too), as a crash or an OOM kill ends it: only with `killable`. */
  kill(): Promise<void>;
}

export interface ServeOptions {
  /** Another start on the same data (database, settings): a restarted server. */
  dir?: string;
  port?: number;
  /** Hex; else serve makes a random one, as it does by default. */
  token?: string;
  /** In its own process group, so that kill() ends the engines with it. */
  killable?: boolean;
  /** An engine module the server's engines load instead of the real one (KVBENCH_ENGINE_MODULE: a test fixture). */
  engineModule?: string;
}

export async function startServe(opts: ServeOptions = {}): Promise<Served> {
  const dir = opts.dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'kvbench-e2e-'));
  const db = path.join(dir, 'kvbench.db');
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  delete env.KVBENCH_ENGINE_MODULE;
  delete env.KVBENCH_SERVE_TOKEN;
  if (opts.token) env.KVBENCH_SERVE_TOKEN = opts.token;
  if (opts.engineModule) env.KVBENCH_ENGINE_MODULE = opts.engineModule;
  const child = spawn(nodeBinary(), [path.join(REPO_ROOT, 'bin', 'kvbench.js'), 'serve', '--port', String(opts.port ?? 0), '--db', db, '--settings', path.join(dir, 'settings.json')], {
    cwd: dir,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: opts.killable === true,
  });
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (s: string) => (out += s));
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (out += s));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`kvbench serve printed no URL within 30 s:\n${out}`)), 30_000);
    const check = (): void => {
      const m = /(http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`kvbench serve exited with ${code}:\n${out}`));
    });
  });
  const u = new URL(url);
  return {
    child,
    url,
    origin: u.origin,
    token: u.searchParams.get('token')!,
    dir,
    db,
    output: () => out,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode; // ended already (a kill() ends it by a signal)
      const done = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      const code = await done;
      clearTimeout(timer);
      return code;
    },
    async kill() {
      if (!opts.killable) throw new Error('kill() needs startServe({ killable: true })');
      if (child.exitCode !== null || child.signalCode !== null) return;
      const done = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      process.kill(-child.pid!, 'SIGKILL');
      await done;
    },
  };
}

/** A backend call as the page makes it (the served API with its token), as another tab or a script would: its Result. */
export async function invoke(served: Served, channel: string, body: unknown): Promise<{ ok: boolean; value?: unknown; error?: unknown }> {
  const r = await fetch(`${served.origin}/api/invoke/${channel}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${served.token}` },
    body: JSON.stringify(body),
  });
  return (await r.json()) as { ok: boolean; value?: unknown; error?: unknown };
}

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
}

/** Console errors, page errors and CSP violations a page produced: a clean page has none. */
export function watchPage(page: Page): string[] {
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' || /Content Security Policy|Refused to/i.test(m.text())) problems.push(`console ${m.type()}: ${m.text()}`);
  });
  return problems;
}

/** The wizard's Plan step for `cacheDir`, as a person reaches it: the directory detected on the Hardware step, then Next; it waits for the first plan. */
export async function openPlanStep(page: Page, cacheDir: string): Promise<void> {
  await page.fill('input[name=cacheDir]', cacheDir);
  await page.click('button:has-text("Detect")');
  await page.locator('dd.mono', { hasText: cacheDir }).waitFor({ timeout: 30_000 });
  await page.click('[data-test=to-plan]');
  await page.locator('[data-test=trial-count]').waitFor({ timeout: 30_000 });
}

export async function screenshot(page: Page, name: string): Promise<void> {
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  // From the top, so the fixed navigation column is drawn where a person sees it.
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
}

export interface ServedPage {
  served: Served;
  browser: Browser;
  page: Page;
  /** What watchPage collects of the page. */
  problems: string[];
  /** Closes the browser, stops the server and removes its directory. */
  close(): Promise<void>;
}

/** A fresh `kvbench serve` (on `opts.dir`'s database where given) and a 1280×800 Chromium page on it, its event stream connected ("Live"). */
export async function openServedPage(opts: ServeOptions = {}): Promise<ServedPage> {
  const served = await startServe(opts);
  const browser = await launchChromium();
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  const problems = watchPage(page);
  await page.goto(served.url);
  await page.getByText('Live', { exact: true }).waitFor();
  return {
    served,
    browser,
    page,
    problems,
    async close() {
      await browser.close();
      await served.stop();
      fs.rmSync(served.dir, { recursive: true, force: true });
    },
  };
}
