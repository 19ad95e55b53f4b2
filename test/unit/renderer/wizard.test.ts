// The wizard's screens against a fake backend: hardware with its warnings, the plan with its
// estimate and problems, the run driven by suite events (progress, ETA, finish, cancel).
import { mount, type VueWrapper } from '@vue/test-utils';
import { createPinia, setActivePinia } from 'pinia';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import HardwareStep from '../../../src-renderer/views/HardwareStep.vue';
import PlanStep from '../../../src-renderer/views/PlanStep.vue';
import RunStep from '../../../src-renderer/views/RunStep.vue';
import LineChart from '../../../src-renderer/components/LineChart.vue';
import type { LineSeries } from '../../../src-renderer/components/chart-types.ts';
import { useAppStore } from '../../../src-renderer/stores/app.ts';
import { useLiveRunStore } from '../../../src-renderer/stores/live-run.ts';
import { useWizardStore } from '../../../src-renderer/stores/wizard.ts';
import type { SuiteTrialRef } from '../../../src-shared/domain/scenarios.ts';
import type { HardwareProfile } from '../../../src-shared/domain/hardware.ts';
import type { Advice, ResponseOf } from '../../../src-shared/ipc/contract.ts';
import type { AppEvent } from '../../../src-shared/ipc/events.ts';
import { LOW_SPACE_PROBLEM, SETTINGS, appInfo, hardware, plan, suiteRecord, trial } from './fixtures.ts';
import { flush, installFakeApi, type FakeHandlers } from './fake-api.ts';

// The backend's own advice (src-main/hardware/advice.ts), as hardware.detect answers: it plans each
// profile with the planner, which uses Node, and the renderer's type check has no Node types, so
// it is loaded by a specifier the checker does not follow, and typed by its contract.
const ADVICE_MODULE = '../../../src-main/hardware/advice.ts';
async function hardwareAdvice(hw: HardwareProfile, engineHasGpuTier: boolean): Promise<Advice[]> {
  const m = (await import(/* @vite-ignore */ ADVICE_MODULE)) as { hardwareAdvice: (hw: HardwareProfile, engineHasGpuTier: boolean) => Advice[] };
  return m.hardwareAdvice(hw, engineHasGpuTier);
}

/**
 * The kinds of notice the style sheet colours (`.notice.ok` …): a notice of another class is drawn
 * plain. Read from the file (vitest hands a test an imported style sheet empty), by a specifier the
 * renderer's type check, which has no Node types, does not follow; tests run from the repository root.
 */
const FS_MODULE = 'node:fs';
async function styledNotices(): Promise<string[]> {
  const fs = (await import(/* @vite-ignore */ FS_MODULE)) as { readFileSync: (path: string, encoding: 'utf8') => string };
  return [...fs.readFileSync('src-renderer/styles.css', 'utf8').matchAll(/^\.notice\.([a-z-]+)\s*\{/gm)].map((m) => m[1]);
}

let wrappers: VueWrapper[] = [];
beforeEach(() => {
  setActivePinia(createPinia());
  document.body.innerHTML = '';
});
afterEach(() => {
  for (const w of wrappers.splice(0)) w.unmount();
});
const mountIt = <T,>(c: T): VueWrapper => {
  const w = mount(c as never, { attachTo: document.body });
  wrappers.push(w);
  return w;
};
/** `c` on a fresh store, for `cacheDir`, with Settings in `byteUnits` and `answers` for the other channels. */
async function mountInUnits<T>(c: T, byteUnits: 'decimal' | 'binary', cacheDir: string, answers: FakeHandlers): Promise<VueWrapper> {
  setActivePinia(createPinia());
  installFakeApi({ 'app.info': () => appInfo({ settings: { ...SETTINGS, byteUnits } }), ...answers });
  await useAppStore().load();
  useWizardStore().cacheDir = cacheDir;
  const w = mountIt(c);
  await flush();
  return w;
}

describe('hardware step', () => {
  it('shows what was detected and the warnings, and goes on to the plan', async () => {
    const fake = installFakeApi({
      'app.info': () => appInfo(),
      'hardware.detect': () => ({
        hardware: hardware(),
        advice: [
          { level: 'warn', code: 'no-gpu', message: 'No GPU: GPU scenarios skipped (GPU only, GPU + CPU, GPU + CPU + storage).' },
          { level: 'warn', code: 'system-disk', message: 'Cache dir on the system disk (/ on vda).' },
        ],
      }),
      'suite.plan': () => ({ plan: plan(), hardware: hardware(), advice: [] }),
    });
    const wizard = useWizardStore();
    wizard.cacheDir = '/mnt/nvme/kv';
    const w = mountIt(HardwareStep);
    await flush();
    expect(fake.callsOf('hardware.detect')).toEqual([{ cacheDir: '/mnt/nvme/kv' }]);
    const text = w.text();
    expect(text).toContain('No GPU: GPU scenarios skipped');
    expect(text).toContain('Cache dir on the system disk');
    expect(text).toContain('None detected.');
    expect(text).toContain('EPYC 9454');
    expect(text).toContain('96 logical, 48 physical');
    expect(text).toContain('550 GB'); // 512 GiB RAM in decimal units
    expect(text).toContain('(will be created in /mnt/nvme for the suite, and removed when it ends if nothing else is in it)');
    await w.get('[data-test=to-plan]').trigger('click');
    expect(wizard.step).toBe('plan');
  });

  it("states the drive's size in its name in the units chosen in Settings, as the Disks table does", async () => {
    const vda = { name: 'vda', disks: ['vda'], model: null, serial: null, wwid: null, media: 'virtual', sizeBytes: 256 * 1024 ** 3, backingFile: null };
    for (const [byteUnits, shown] of [
      ['decimal', 'virtual disk vda (275 GB)'],
      ['binary', 'virtual disk vda (256 GiB)'],
    ] as const) {
      const hw = hardware();
      hw.cacheDir = { ...hw.cacheDir!, blockDevice: vda as never, driveIdBasis: 'local-device', driveLabel: 'virtual disk vda (256 GiB)' };
      const w = await mountInUnits(HardwareStep, byteUnits, '/mnt/nvme/kv', { 'hardware.detect': () => ({ hardware: hw, advice: [] }) });
      expect(w.get('[data-test=drive-label]').text()).toBe(shown);
    }
  });

  it('states the low-space warning\'s free space in the units chosen in Settings, as the Free space beside it', async () => {
    const hw = hardware();
    hw.cacheDir = { ...hw.cacheDir!, freeBytes: 21_000_000 }; // 20.0 MiB
    // The backend's own advice for it, as hardware.detect answers.
    const lowSpace = (await hardwareAdvice(hw, false)).filter((a) => a.code === 'low-space');
    expect(lowSpace).toHaveLength(1);
    for (const [byteUnits, shown, other] of [
      ['decimal', 'Only 21.0 MB free in the cache directory', 'MiB'],
      ['binary', 'Only 20.0 MiB free in the cache directory', ' MB'],
    ] as const) {
      const w = await mountInUnits(HardwareStep, byteUnits, '/mnt/nvme/kv', { 'hardware.detect': () => ({ hardware: hw, advice: lowSpace }) });
      const notice = w.get('[data-code=low-space]').text();
      expect(notice).toContain(shown);
      expect(notice).not.toContain(other);
    }
  });

  it("states every size of the low-space warning in the units chosen in Settings, and names the app's field, not the flag", async () => {
    const hw = hardware();
    hw.cacheDir = { ...hw.cacheDir!, freeBytes: 1.5 * 1024 ** 3 };
    const lowSpace = (await hardwareAdvice(hw, false)).filter((a) => a.code === 'low-space');
    const w = await mountInUnits(HardwareStep, 'decimal', '/mnt/nvme/kv', { 'hardware.detect': () => ({ hardware: hw, advice: lowSpace }) });
    // The field takes GiB, so its least value stays in GiB; the free space and smoke's need follow Settings.
    expect(w.get('[data-code=low-space]').text()).toContain(
      'Only 1.61 GB free in the cache directory: no profile fits (smoke, the smallest, needs 2.15 GB). The smoke profile fits with a smaller “Storage tier capacity (GiB)”: from 0.58 GiB (one KV entry of tiny-1b) up to the free space.',
    );
  });

  it('names the driver and CUDA version of a usable GPU, and the reason when the GPU tier cannot use one', async () => {
    const h100 = { index: 0, vendor: 'NVIDIA', model: 'H100 80GB HBM3', memoryBytes: 80 * 1024 ** 3, driverVersion: '580.95', busId: '00000000:41:00.0', compute: true, engineUsable: true };
    const withDriver = { ...hardware(), gpus: [h100], cuda: { available: true, reason: null, driverVersion: '580.95', cudaVersion: '13.0', devices: [{ index: 0, name: 'H100 80GB HBM3', totalMemoryBytes: 80 * 1024 ** 3, pciBusId: '00000000:41:00.0' }] } };
    installFakeApi({ 'hardware.detect': () => ({ hardware: withDriver, advice: [] }) });
    useWizardStore().cacheDir = '/mnt/nvme/kv';
    const w = mountIt(HardwareStep);
    await flush();
    expect(w.text()).toContain('H100 80GB HBM3');
    expect(w.text()).toContain('00000000:41:00.0');
    expect(w.get('[data-test=gpu-tier]').text()).toBe('GPU tier: 1 GPU through the NVIDIA driver 580.95 (supports CUDA 13.0).');

    setActivePinia(createPinia());
    const reason = 'libcuda.so.1 could not be loaded: no NVIDIA driver is installed, or it is not on the library path';
    const noDriver = { ...hardware(), gpus: [{ ...h100, driverVersion: null, engineUsable: false }], cuda: { available: false, reason, driverVersion: null, cudaVersion: null, devices: [] } };
    installFakeApi({ 'hardware.detect': () => ({ hardware: noDriver, advice: [] }) });
    useWizardStore().cacheDir = '/mnt/nvme/kv';
    const w2 = mountIt(HardwareStep);
    await flush();
    expect(w2.text()).toContain('(not usable by the GPU tier)');
    expect(w2.get('[data-test=gpu-tier]').text()).toBe(`No GPU tier: ${reason}.`);
  });

  it("states each GPU's PCIe link at detection and at most, in the units chosen in Settings", async () => {
    const h100 = { index: 0, vendor: 'NVIDIA', model: 'H100 80GB HBM3', memoryBytes: 80 * 1024 ** 3, driverVersion: '580.95', busId: '00000000:41:00.0', compute: true, engineUsable: true };
    const withDriver = { ...hardware(), gpus: [h100], cuda: { available: true, reason: null, driverVersion: '580.95', cudaVersion: '13.0', devices: [{ index: 0, name: 'H100 80GB HBM3', totalMemoryBytes: 80 * 1024 ** 3, pciBusId: '00000000:41:00.0' }] } };
    const older = await mountInUnits(HardwareStep, 'decimal', '/mnt/nvme/kv', { 'hardware.detect': () => ({ hardware: withDriver, advice: [] }) });
    expect(older.get('[data-test=gpu-link]').text()).toBe('PCIe link not recorded (detected by an older kvbench)');
    const link = { currentGen: 1, currentLanes: 16, maxGen: 5, maxLanes: 16, upstreamMaxGen: null, upstreamMaxLanes: null };
    for (const [byteUnits, rate] of [
      ['decimal', '63.0 GB/s'],
      ['binary', '58.7 GiB/s'],
    ] as const) {
      const linked = await mountInUnits(HardwareStep, byteUnits, '/mnt/nvme/kv', { 'hardware.detect': () => ({ hardware: { ...withDriver, gpus: [{ ...h100, pcieLink: link }] }, advice: [] }) });
      expect(linked.get('[data-test=gpu-link]').text()).toBe(
        `PCIe Gen1 x16 at detection, max Gen5 x16; ${rate} per direction at Gen5 x16 before packet overhead (below its max at detection: an idle GPU's link trains down, and back up under load)`,
      );
    }
  });

  it('states the GPU copy probe where it ran, and when it will run where it has not', async () => {
    const h100 = { index: 0, vendor: 'NVIDIA', model: 'H100 80GB HBM3', memoryBytes: 80 * 1024 ** 3, driverVersion: '580.95', busId: '00000000:41:00.0', compute: true, engineUsable: true };
    const withDriver = { ...hardware(), gpus: [h100], cuda: { available: true, reason: null, driverVersion: '580.95', cudaVersion: '13.0', devices: [{ index: 0, name: 'H100 80GB HBM3', totalMemoryBytes: 80 * 1024 ** 3, pciBusId: '00000000:41:00.0' }] } };
    const before = await mountInUnits(HardwareStep, 'decimal', '/mnt/nvme/kv', { 'hardware.detect': () => ({ hardware: withDriver, advice: [] }) });
    // Only a suite with a GPU tier, and the probe on, measures it.
    expect(before.get('[data-test=gpu-copy]').text()).toBe('GPU copy: measured when a suite with a GPU tier starts with “Probe the drive and memory copy first” on.');
    expect(before.get('[data-test=memory-copy]').text()).toBe('measured when a suite starts with “Probe the drive and memory copy first” on');
    const gpuCopy = { device: 0, model: 'H100 80GB HBM3', h2dBytesPerSec: 53.38e9, d2hBytesPerSec: 53.68e9, chunkBytes: 16 * 1024 ** 2, bytesPerDirection: 4 * 1024 ** 3, copyThreads: 2, stagingPinned: true, measuredAt: '2026-11-25T13:25:47.784Z' };
    const probed = await mountInUnits(HardwareStep, 'decimal', '/mnt/nvme/kv', { 'hardware.detect': () => ({ hardware: { ...withDriver, gpuCopy }, advice: [] }) });
    expect(probed.get('[data-test=gpu-copy]').text()).toBe('GPU copy: host→device 53.4 GB/s, device→host 53.7 GB/s (through the GPU tier on GPU 0, pinned staging).');
    // No usable GPU: nothing to say of it.
    const none = await mountInUnits(HardwareStep, 'decimal', '/mnt/nvme/kv', { 'hardware.detect': () => ({ hardware: hardware(), advice: [] }) });
    expect(none.find('[data-test=gpu-copy]').exists()).toBe(false);
  });

  it('will not go on when the cache directory is unusable, and shows detection errors', async () => {
    installFakeApi({ 'hardware.detect': () => ({ hardware: hardware(), advice: [{ level: 'error', code: 'not-writable', message: 'The cache directory /x is not writable.' }] }) });
    useWizardStore().cacheDir = '/x';
    const w = mountIt(HardwareStep);
    await flush();
    expect(w.get('[data-test=to-plan]').attributes('disabled')).toBeDefined();

    setActivePinia(createPinia());
    installFakeApi({ 'hardware.detect': () => ({ error: { code: 'INTERNAL', message: 'systeminformation exploded' } }) });
    useWizardStore().cacheDir = '/y';
    const w2 = mountIt(HardwareStep);
    await flush();
    expect(w2.get('[role=alert]').text()).toContain('systeminformation exploded');
  });

  it('a failed detection clears the last directory\'s results, and Next waits for a detection of the directory in the field', async () => {
    const notWritable = { level: 'error' as const, code: 'not-writable', message: 'The cache directory /ro is not writable.' };
    installFakeApi({
      'hardware.detect': (r) =>
        r.cacheDir === '/etc'
          ? { error: { code: 'VALIDATION', message: 'the cache directory cannot be a system directory: /etc' } }
          : { hardware: hardware(), advice: r.cacheDir === '/ro' ? [notWritable] : [] },
    });
    const wizard = useWizardStore();
    wizard.cacheDir = '/tmp/kvbench-cache';
    const w = mountIt(HardwareStep);
    await flush();
    const next = (): boolean => w.get('[data-test=to-plan]').attributes('disabled') === undefined;
    expect(next()).toBe(true);
    expect(w.text()).toContain('Free space');

    // Another directory typed, not yet detected: what is shown is marked as the old one's, and Next waits.
    await w.get('input[name=cacheDir]').setValue('/etc');
    expect(w.get('[data-test=hardware-stale]').text()).toContain('/tmp/kvbench-cache');
    expect(next()).toBe(false);

    // Detected and refused: nothing of /tmp/kvbench-cache stays on screen as if it were /etc's.
    await w.get('form').trigger('submit');
    await flush();
    expect(w.get('[role=alert]').text()).toContain('cannot be a system directory: /etc');
    expect(w.text()).not.toContain('Free space');
    expect(w.find('[data-test=hardware-stale]').exists()).toBe(false);
    expect(next()).toBe(false);

    // A not-writable directory, then a failed detection: its blocking advice goes with it, and Next stays off.
    await wizard.detect('/ro');
    await flush();
    expect(w.text()).toContain('is not writable');
    expect(next()).toBe(false);
    await wizard.detect('/etc');
    await flush();
    expect(w.text()).not.toContain('is not writable');
    expect(next()).toBe(false);

    // An empty field is no directory either.
    await wizard.detect('/tmp/kvbench-cache');
    await flush();
    expect(next()).toBe(true);
    await w.get('input[name=cacheDir]').setValue('');
    await w.get('form').trigger('submit');
    await flush();
    expect(w.get('[role=alert]').text()).toContain('Enter the directory');
    expect(next()).toBe(false);
    expect(wizard.hardwareUsable).toBe(false);
  });
});

describe('plan step', () => {
  it('numbers the nine scenarios as "scenario 3 of 9", not "#3" (History\'s numbers are trials\', rev12-gui L7)', async () => {
    installFakeApi({ 'app.info': () => appInfo(), 'suite.plan': () => ({ plan: plan(), hardware: hardware(), advice: [] }) });
    useWizardStore().cacheDir = '/mnt/nvme/kv';
    const w = mountIt(PlanStep);
    await flush();
    const number = w.get('[data-scenario=storage-only] [data-test=scenario-number]');
    expect(number.text()).toBe('scenario 3 of 9');
    expect(number.attributes('title')).toBe("Scenario 3 of the reference benchmark's nine-scenario suite");
    expect(w.get('.checklist').text()).not.toContain('#');
  });

  it('says under its cache directory field that the default saved in Settings is refused, and where to change it', async () => {
    const saved = '/etc/kvbench';
    const refused = 'the default cache directory cannot be a system directory: /etc/kvbench';
    installFakeApi({
      'app.info': () => appInfo({ settings: { ...SETTINGS, defaultCacheDir: saved }, suggestedCacheDir: saved, defaultCacheDirProblem: refused }),
      'suite.plan': () => ({ error: { code: 'VALIDATION', message: 'the cache directory cannot be a system directory: /etc/kvbench' } }),
    });
    await useAppStore().load();
    const wizard = useWizardStore();
    wizard.cacheDir = saved;
    const w = mountIt(PlanStep);
    await flush();
    const field = w.get('input[name=planCacheDir]');
    expect(field.attributes('aria-invalid')).toBe('true');
    const ids = (field.attributes('aria-describedby') ?? '').split(' ');
    const said = ids.map((id) => document.getElementById(id)?.textContent ?? '').join(' ');
    expect(said).toContain(refused);
    expect(said).toContain('Settings');
    // Another directory typed here: the form's own, and no longer the saved default's problem.
    await field.setValue('/mnt/nvme/kv');
    await flush();
    expect(w.find('[data-test=default-cache-dir-problem]').exists()).toBe(false);
  });

  it('plans with the chosen parameters, shows the estimate, and starts the suite', async () => {
    const fake = installFakeApi({ 'app.info': () => appInfo(), 'suite.plan': () => ({ plan: plan(), hardware: hardware(), advice: [] }), 'suite.start': () => ({ suiteId: 7 }) });
    const wizard = useWizardStore();
    const run = useLiveRunStore();
    wizard.cacheDir = '/mnt/nvme/kv';
    const w = mountIt(PlanStep);
    await flush();
    expect(w.get('[data-test=trial-count]').text()).toBe('4');
    expect(w.text()).toContain('The cache directory has room for this suite.');
    expect(w.text()).toContain('Skipped: no GPU detected');
    const gpu = w.get('[data-scenario=gpu-only] input').element as HTMLInputElement;
    expect(gpu.disabled).toBe(true);
    expect(gpu.checked).toBe(false);
    expect(w.findAll('[data-run]').map((r) => r.attributes('data-run'))).toEqual(['cpu-only', 'storage-only']);

    await w.get('[data-profile=smoke] input').setValue(true);
    await w.get('[data-scenario=production] input').setValue(false);
    await new Promise((r) => setTimeout(r, 300)); // the form re-plans after a pause
    await flush();
    let last = fake.callsOf('suite.plan').at(-1) as Record<string, unknown>;
    expect(last).toMatchObject({ cacheDir: '/mnt/nvme/kv', profile: 'smoke', trials: 3, probe: true });
    expect(last).not.toHaveProperty('warmUpS'); // 0: the reference's behaviour, nothing to send

    await w.get('input[name=warmUpS]').setValue('15');
    await w.get('input[name=warmUpS]').trigger('change');
    await new Promise((r) => setTimeout(r, 300));
    await flush();
    last = fake.callsOf('suite.plan').at(-1) as Record<string, unknown>;
    expect(last).toMatchObject({ profile: 'smoke', warmUpS: 15 });
    expect(last.scenarios).not.toContain('production');
    expect(last.scenarios).toContain('cpu-only');

    await w.get('[data-test=start-suite]').trigger('click');
    await flush();
    expect(fake.callsOf('suite.start')).toHaveLength(1);
    expect(wizard.step).toBe('run');
    expect(run.suiteId).toBe(7);
  });

  it('does not start a suite while no database is open, and says why', async () => {
    const fake = installFakeApi({ 'suite.plan': () => ({ plan: plan(), hardware: hardware(), advice: [] }), 'suite.start': () => ({ suiteId: 7 }) });
    const app = useAppStore();
    app.info = appInfo({ databaseError: { code: 'DB_CORRUPT', message: '/data/kvbench.db is damaged or not a database (SQLITE_CORRUPT: database disk image is malformed). kvbench will not write to it.' } });
    const wizard = useWizardStore();
    wizard.cacheDir = '/mnt/nvme/kv';
    const w = mountIt(PlanStep);
    await flush();
    expect(w.get('[data-test=trial-count]').text()).toBe('4'); // planning needs no database
    expect(w.get('[data-test=start-suite]').attributes('disabled')).toBeDefined();
    expect(w.get('[data-test=no-database]').text()).toContain('No database is open');
    await w.get('[data-test=no-database] button').trigger('click');
    expect(window.location.hash).toBe('#/settings');
    expect(fake.callsOf('suite.start')).toEqual([]);
    // Once a database is open, the suite can start.
    app.info = appInfo();
    await flush();
    expect(w.find('[data-test=no-database]').exists()).toBe(false);
    expect(w.get('[data-test=start-suite]').attributes('disabled')).toBeUndefined();
  });

  it('starts only the plan on screen: not while a change waits to be planned, nor after re-planning failed', async () => {
    let fail = false;
    const fake = installFakeApi({
      'suite.plan': () => (fail ? { error: { code: 'VALIDATION', message: 'no such model' } } : { plan: plan(), hardware: hardware(), advice: [] }),
      'suite.start': () => ({ suiteId: 7 }),
    });
    const wizard = useWizardStore();
    const run = useLiveRunStore();
    wizard.cacheDir = '/mnt/nvme/kv';
    const w = mountIt(PlanStep);
    await flush();
    const startDisabled = (): boolean => w.get('[data-test=start-suite]').attributes('disabled') !== undefined;
    expect(startDisabled()).toBe(false);
    await w.get('[data-profile=smoke] input').setValue(true);
    expect(startDisabled()).toBe(true); // the change waits for its re-plan
    expect(await run.start()).toBeNull();
    fail = true;
    await new Promise((r) => setTimeout(r, 300));
    await flush();
    expect(w.text()).toContain('no such model');
    expect(startDisabled()).toBe(true); // the quick plan is still on screen, but the form says smoke
    await run.start();
    expect(fake.callsOf('suite.start')).toEqual([]);

    fail = false;
    await w.get('input[name=warmUpS]').setValue('5');
    await w.get('input[name=warmUpS]').trigger('change');
    await new Promise((r) => setTimeout(r, 300));
    await flush();
    expect(startDisabled()).toBe(false);
    await w.get('[data-test=start-suite]').trigger('click');
    await flush();
    expect(fake.callsOf('suite.start')).toEqual([{ ...fake.callsOf('suite.plan').at(-1)!, label: null }]);
    expect(fake.callsOf('suite.start')[0]).toMatchObject({ profile: 'smoke', warmUpS: 5 });
  });

  it('a Label holding a bidirectional override or a control character is refused as typed, by the backend\'s own check: said under it, escaped and marked, never planned', async () => {
    // s12 left alone: a pasted U+202E showed raw in the field until the backend refused the plan.
    const fake = installFakeApi({ 'suite.plan': () => ({ plan: plan(), hardware: hardware(), advice: [] }) });
    const wizard = useWizardStore();
    wizard.cacheDir = '/mnt/nvme/kv';
    const w = mountIt(PlanStep);
    await flush();
    const settle = async (): Promise<void> => {
      await new Promise((r) => setTimeout(r, 300)); // the form re-plans after a pause
      await flush();
    };
    const plans = fake.callsOf('suite.plan').length;
    await w.get('input[name=label]').setValue('fw 2.1\u202Efdp.exe');
    await settle();
    const problem = w.get('[data-test=label-problem]');
    expect(problem.text()).toBe('Label must not hold control characters, line breaks or bidirectional overrides (found U+202E): fw 2.1\\u{202e}fdp.exe');
    expect(problem.findAll('[data-test=escaped-char]').map((e) => e.text())).toEqual(['\\u{202e}']);
    expect(problem.find('bdi.label-text').exists()).toBe(true);
    const input = w.get('input[name=label]').element as HTMLInputElement;
    expect(input.getAttribute('aria-invalid')).toBe('true');
    expect(input.getAttribute('aria-describedby')).toBe('planLabel-problem');
    expect(w.get('[data-test=start-suite]').attributes('disabled')).toBeDefined();
    expect(w.get('[data-test=form-problems]').text()).toContain('Fix the fields marked above');
    expect(fake.callsOf('suite.plan')).toHaveLength(plans);
    // Spaces and line breaks at the ends are trimmed, as the backend stores labels: not refused.
    await w.get('input[name=label]').setValue('  fw 2.1  ');
    await settle();
    expect(w.find('[data-test=label-problem]').exists()).toBe(false);
    expect(input.getAttribute('aria-invalid')).toBe('false');
    expect(w.get('[data-test=start-suite]').attributes('disabled')).toBeUndefined();
  });

  it('says under a number field what is wrong with it and blocks Start, never planning a value other than the one shown', async () => {
    const fake = installFakeApi({ 'suite.plan': () => ({ plan: plan(), hardware: hardware(), advice: [] }), 'suite.start': () => ({ suiteId: 7 }) });
    const wizard = useWizardStore();
    const run = useLiveRunStore();
    wizard.cacheDir = '/mnt/nvme/kv';
    const w = mountIt(PlanStep);
    await flush();
    const startDisabled = (): boolean => w.get('[data-test=start-suite]').attributes('disabled') !== undefined;
    const settle = async (): Promise<void> => {
      await new Promise((r) => setTimeout(r, 300)); // the form re-plans after a pause
      await flush();
    };
    const type = async (name: string, text: string): Promise<void> => {
      await w.get(`input[name=${name}]`).setValue(text);
      await w.get(`input[name=${name}]`).trigger('change');
      await settle();
    };
    const fieldOf = (name: string) => w.get(`input[name=${name}]`).element.closest('label')!;
    const input = (name: string) => w.get(`input[name=${name}]`).element as HTMLInputElement;
    expect(startDisabled()).toBe(false);
    const plans = fake.callsOf('suite.plan').length;

    // A stray minus in the capacity is not "0 = 95 % of the free space".
    await type('storageCapacityGib', '-5');
    expect(fieldOf('storageCapacityGib').textContent).toContain('Storage tier capacity must be a number of GiB, 0 or more');
    expect(input('storageCapacityGib').value).toBe('-5');
    expect(input('storageCapacityGib').getAttribute('aria-invalid')).toBe('true');
    expect(wizard.form.storageCapacityGib).toBeNull();
    expect(startDisabled()).toBe(true);
    expect(w.get('[data-test=form-problems]').text()).toContain('Fix the fields marked above');
    expect(fake.callsOf('suite.plan')).toHaveLength(plans); // nothing planned from it
    await type('storageCapacityGib', '2');
    expect(fieldOf('storageCapacityGib').querySelector('.field-problem')).toBeNull();
    expect(fake.callsOf('suite.plan').at(-1)).toMatchObject({ storageCapacityGib: 2 });
    expect(startDisabled()).toBe(false);

    // A negative warm-up is refused as typed, not planned as 0 behind a field that says -3.
    await type('warmUpS', '-3');
    expect(fieldOf('warmUpS').textContent).toContain('Warm-up must be a whole number of seconds from 0 to 3600');
    expect(startDisabled()).toBe(true);
    // An empty warm-up is none: the field says 0, the value planned, though the form's value did not change.
    await type('warmUpS', '');
    expect(input('warmUpS').value).toBe('0');
    expect(fieldOf('warmUpS').querySelector('.field-problem')).toBeNull();
    expect(startDisabled()).toBe(false);
    await type('warmUpS', '1.5');
    expect(fieldOf('warmUpS').textContent).toContain('whole number');
    await type('warmUpS', '007');
    expect(input('warmUpS').value).toBe('7');
    expect(fake.callsOf('suite.plan').at(-1)).toMatchObject({ warmUpS: 7 });

    // An empty trials field is caught here, in words about the field, not as the validator's output.
    await type('trials', '');
    expect(fieldOf('trials').textContent).toContain('Enter how many trials to run per scenario');
    expect(w.text()).not.toMatch(/Invalid input|expected number|✖/);
    expect(startDisabled()).toBe(true);
    await run.start();
    expect(fake.callsOf('suite.start')).toEqual([]);
    await type('trials', '4');
    expect(fake.callsOf('suite.plan').at(-1)).toMatchObject({ trials: 4 });

    // The cache directory emptied on this step is said next to it too.
    await w.get('input[name=planCacheDir]').setValue('');
    await settle();
    expect(fieldOf('planCacheDir').textContent).toContain('Enter the cache directory');
    expect(fake.callsOf('suite.plan').every((r) => (r as { cacheDir: string }).cacheDir !== '')).toBe(true);
    expect(startDisabled()).toBe(true);
  });

  it('offers "End each trial after N requests", off by default: planned and started with the count typed, the duration then a cap, a bad count refused under the field', async () => {
    const fake = installFakeApi({
      // As the planner answers: every run carries the request's count (0: none), and a note says the time is the longest.
      'suite.plan': (req) => {
        const n = (req as { maxRequests?: number }).maxRequests ?? 0;
        const p = plan();
        for (const r of p.runs) r.options = { ...r.options, maxRequests: n };
        if (n > 0) p.notes = [`each trial ends once ${n} requests have completed in its measured window, or at its 3 s if that comes first: the estimate is the longest it can take`];
        return { plan: p, hardware: hardware(), advice: [] };
      },
      'suite.start': () => ({ suiteId: 7 }),
    });
    const wizard = useWizardStore();
    wizard.cacheDir = '/mnt/nvme/kv';
    const w = mountIt(PlanStep);
    await flush();
    const settle = async (): Promise<void> => {
      await new Promise((r) => setTimeout(r, 300)); // the form re-plans after a pause
      await flush();
    };
    const type = async (text: string): Promise<void> => {
      await w.get('input[name=maxRequests]').setValue(text);
      await w.get('input[name=maxRequests]').trigger('change');
      await settle();
    };
    const input = w.get('input[name=maxRequests]').element as HTMLInputElement;
    const field = input.closest('label')!;
    const startDisabled = (): boolean => w.get('[data-test=start-suite]').attributes('disabled') !== undefined;
    const lastPlan = (): Record<string, unknown> => fake.callsOf('suite.plan').at(-1) as Record<string, unknown>;

    // Off: an empty field that says so, nothing sent, each trial its whole duration.
    expect(field.textContent).toContain('End each trial after N requests (the duration is then a cap)');
    expect(w.get('[data-test=max-requests-hint]').text()).toMatch(/quick check.*not comparable to fixed-duration trials/);
    expect(input.value).toBe('');
    expect(input.placeholder).toBe('off');
    expect(lastPlan()).not.toHaveProperty('maxRequests');
    expect(w.find('[data-test=plan-max-requests]').exists()).toBe(false);
    expect(w.get('[data-test=plan-time]').element.nextElementSibling!.textContent).toBe('engine start-up included');

    await type('10');
    expect(lastPlan()).toMatchObject({ maxRequests: 10 });
    expect(w.findAll('[data-test=plan-max-requests]').map((c) => c.text())).toEqual(['or 10 req', 'or 10 req']);
    expect(w.get('[data-test=plan-time]').element.nextElementSibling!.textContent).toBe('every trial at its cap, engine start-up included');
    expect(w.findAll('.notes li').map((li) => li.text())).toEqual([
      'Each trial ends once 10 requests have completed in its measured window, or at its 3 s if that comes first: the estimate is the longest it can take.',
    ]);

    // Refused as typed, under the field, never planned as another count.
    for (const bad of ['-1', '2.5']) {
      await type(bad);
      expect(field.querySelector('.field-problem')?.textContent, bad).toContain('must be a whole number, 0 or more');
      expect(input.value).toBe(bad);
      expect(input.getAttribute('aria-invalid')).toBe('true');
      expect(startDisabled()).toBe(true);
    }
    expect(lastPlan()).toMatchObject({ maxRequests: 10 });
    // 0 is off, shown as the empty field.
    await type('0');
    expect(input.value).toBe('');
    expect(field.querySelector('.field-problem')).toBeNull();
    expect(lastPlan()).not.toHaveProperty('maxRequests');

    await type('25');
    expect(startDisabled()).toBe(false);
    await w.get('[data-test=start-suite]').trigger('click');
    await flush();
    expect(fake.callsOf('suite.start')).toEqual([{ ...lastPlan(), label: null }]);
    expect(fake.callsOf('suite.start')[0]).toMatchObject({ maxRequests: 25 });
  });

  it("states the plan's tier sizes in the units chosen in Settings, as the disk estimate beside them, and in decimal units with the GiB their fields take", async () => {
    for (const [byteUnits, gpu, cpu, cap, disk, quick] of [
      ['decimal', 'none', '1.07 GB (1 GiB)', '2.15 GB (2 GiB)', '2.15 GB', 'storage tier capped at 17.2 GB (16 GiB).'],
      ['binary', 'none', '1.00 GiB', '2.00 GiB', '2.00 GiB', 'storage tier capped at 16.0 GiB.'],
    ] as const) {
      const w = await mountInUnits(PlanStep, byteUnits, '/mnt/nvme/kv', { 'suite.plan': () => ({ plan: plan(), hardware: hardware(), advice: [] }) });
      const head = w.findAll('[data-run=cpu-only]').length ? w.get('[data-run=cpu-only]').element.closest('table')!.querySelector('thead')!.textContent! : '';
      expect(head).not.toMatch(/GiB|GB/);
      const cells = w.get('[data-run=cpu-only]').findAll('td').map((c) => c.text().replace(/\u00a0/g, ' '));
      expect(cells.slice(3, 6)).toEqual([gpu, cpu, cap]);
      expect(w.text()).toContain(`${disk} at once`);
      // The profiles' sizes as the table states them; the field says its unit, GiB, as the CLI's flag takes it.
      expect(w.get('[data-profile=quick] [data-test=profile-description]').text().replace(/\u00a0/g, ' ')).toContain(quick);
      expect(w.get('input[name=storageCapacityGib]').element.closest('label')!.textContent).toContain('Storage tier capacity (GiB)');
    }
  });

  it("says the planner's refusal with the form's own field names, not the CLI's flags", async () => {
    const refused = plan({ fits: false });
    refused.estimate.problems = ['the cache directory cannot hold this suite: it needs 2.00 GiB free (cpu-only: storage tier 2.00 GiB) but /mnt/x/kv has 20.0 MiB free. Free space, choose another --cache-dir, or set a smaller --storage-capacity-gb'];
    refused.notes = ['the estimate includes the drive probe before the trials: about 6 s, with 0.25 GiB of files in the cache directory, removed after (--no-probe skips it)'];
    installFakeApi({ 'suite.plan': () => ({ plan: refused, hardware: hardware(), advice: [] }) });
    useWizardStore().cacheDir = '/mnt/x/kv';
    const w = mountIt(PlanStep);
    await flush();
    const problem = w.get('.notice.error').text();
    expect(problem).toMatch(/Free space, choose another “Cache directory”, or set a smaller “Storage tier capacity \(GiB\)”\.$/);
    expect(w.get('.notes').text()).toContain('(unticking “Probe the drive and memory copy first” skips it)');
    // The names are those of the fields on the form.
    const labelOf = (name: string): string => w.get(`[name=${name}]`).element.closest('label')!.firstChild!.textContent!.trim();
    expect(labelOf('storageCapacityGib')).toBe('Storage tier capacity (GiB)');
    expect(labelOf('planCacheDir')).toBe('Cache directory');
    expect(w.get('[name=probe]').element.closest('label')!.textContent).toMatch(/^Probe the drive and memory copy first \(/);
  });

  it("states the planner's low-space problem in the units chosen in Settings, as the Free line above it", async () => {
    // The planner's own refusal (planner.test checks that planSuite writes it): 20 MiB (21.0 MB) free where the smoke suite needs 2 GiB.
    const refused = plan({ fits: false });
    refused.estimate = { ...refused.estimate, freeBytes: 20 * 1024 ** 2, problems: [LOW_SPACE_PROBLEM.text], problemSizes: [LOW_SPACE_PROBLEM.sizes] };
    const hw = hardware();
    for (const [byteUnits, free, needs, other] of [
      ['decimal', 'has 21.0 MB free', 'needs 2.15 GB free', 'iB'],
      ['binary', 'has 20.0 MiB free', 'needs 2.00 GiB free', ' MB'],
    ] as const) {
      const w = await mountInUnits(PlanStep, byteUnits, '/mnt/kv', { 'suite.plan': () => ({ plan: refused, hardware: hw, advice: [] }) });
      const shownFree = w.findAll('.kv dd')[1]!.text();
      const problem = w.get('.notice.error').text();
      expect(problem).toContain(free);
      expect(problem).toContain(needs);
      expect(shownFree).toContain(free.replace(/^has | free$/g, ''));
      // The form's field name "Storage tier capacity (GiB)" and the field's value (the storage tier of 2 GiB) stay in the field's unit.
      expect(problem.replace('(GiB)', '').replace('storage tier 2 GiB', '')).not.toContain(other);
      // A sentence, naming the scenario as the Scenarios list does.
      expect(problem).toMatch(/^!The cache directory cannot hold this suite: it needs .* \(CPU only: storage tier 2 GiB\) .*“Storage tier capacity \(GiB\)”\.$/);
    }
  });

  it("says a too small storage tier capacity in the field's unit, with the app's words and scenario labels, as a sentence", async () => {
    // The planner's own problem (planner.test checks that planSuite writes it) for a capacity of 0.0001 GiB.
    const refused = plan({ fits: false });
    refused.estimate = {
      ...refused.estimate,
      problems: ['--storage-capacity-gb 0.0001 cannot hold one KV entry of tiny-1b (the largest is 0.58 GiB), so cpu-only, production, autoscale would fail: set it to at least 2 GiB, or 0 (95 % of the free space)'],
      problemSizes: [[]],
    };
    const w = await mountInUnits(PlanStep, 'decimal', '/mnt/kv', { 'suite.plan': () => ({ plan: refused, hardware: hardware(), advice: [] }) });
    expect(w.get('.notice.error').text()).toBe(
      '!“Storage tier capacity (GiB)” 0.0001 cannot hold one KV entry of tiny-1b (the largest is 0.58 GiB), so CPU only, Realistic production, Autoscaling discovery would fail: set it to at least 2 GiB, or 0 (95 % of the free space).',
    );
  });

  it('a refused cache directory leaves no "has room" of the last one: its estimate is greyed and named as the old plan, and the field is marked', async () => {
    installFakeApi({
      'suite.plan': (r) =>
        r.cacheDir === '/etc' ? { error: { code: 'VALIDATION', message: 'the cache directory cannot be a system directory: /etc' } } : { plan: { ...plan(), cacheDir: r.cacheDir }, hardware: hardware(), advice: [] },
    });
    const wizard = useWizardStore();
    wizard.cacheDir = '/mnt/kv';
    const w = mountIt(PlanStep);
    await flush();
    expect(w.text()).toContain('The cache directory has room for this suite.');
    expect(w.find('[data-test=estimate-stale]').exists()).toBe(false);
    const dirField = () => w.get('[name=planCacheDir]').element as HTMLInputElement;
    expect(dirField().getAttribute('aria-invalid')).toBe('false');

    wizard.cacheDir = '/etc';
    await wizard.replan();
    await flush();
    expect(w.get('#plan-error').text()).toContain('cannot be a system directory: /etc');
    expect(w.text()).not.toContain('The cache directory has room for this suite.');
    expect(w.get('[data-test=estimate-stale]').text()).toBe('The last plan that could be made, for /mnt/kv: not the form as it is now.');
    expect(w.get('[data-test=estimate]').classes()).toContain('stale');
    expect(dirField().getAttribute('aria-invalid')).toBe('true');
    expect(dirField().getAttribute('aria-describedby')).toBe('plan-error');

    // Planned again: current, and green where it has room.
    wizard.cacheDir = '/mnt/kv2';
    await wizard.replan();
    await flush();
    expect(w.find('[data-test=estimate-stale]').exists()).toBe(false);
    expect(w.text()).toContain('The cache directory has room for this suite.');
  });

  it('marks the fields a problem of the plan names: invalid, described by the problem, until the problem goes', async () => {
    // The planner's problems as planSuite writes them (planner.test checks that): one names the capacity, one it and the cache directory.
    const tooSmall = '--storage-capacity-gb 0.0001 cannot hold one KV entry of tiny-1b (the largest is 0.58 GiB), so cpu-only would fail: set it to at least 2 GiB, or 0 (95 % of the free space)';
    const refused = plan({ fits: false });
    refused.estimate = { ...refused.estimate, problems: [tooSmall, LOW_SPACE_PROBLEM.text], problemSizes: [[], LOW_SPACE_PROBLEM.sizes] };
    let answer: ResponseOf<'suite.plan'> | { error: { code: 'VALIDATION'; message: string } } = { plan: refused, hardware: hardware(), advice: [] };
    installFakeApi({ 'suite.plan': () => answer });
    const wizard = useWizardStore();
    wizard.cacheDir = '/mnt/kv';
    const w = mountIt(PlanStep);
    await flush();
    const field = (name: string) => w.get(`[name=${name}]`).element as HTMLInputElement | HTMLSelectElement;
    const describedBy = (name: string): string[] => (field(name).getAttribute('aria-describedby') ?? '').split(' ').filter(Boolean).map((id) => document.getElementById(id)?.textContent ?? `no #${id}`);
    expect(field('storageCapacityGib').getAttribute('aria-invalid')).toBe('true');
    expect(describedBy('storageCapacityGib')).toEqual([expect.stringContaining('“Storage tier capacity (GiB)” 0.0001 cannot hold'), expect.stringContaining('The cache directory cannot hold this suite')]);
    expect(field('planCacheDir').getAttribute('aria-invalid')).toBe('true');
    expect(describedBy('planCacheDir')).toEqual([expect.stringContaining('The cache directory cannot hold this suite')]);
    for (const other of ['trials', 'durationS', 'warmUpS', 'model', 'label']) {
      expect(field(other).getAttribute('aria-invalid'), other).not.toBe('true');
      expect(field(other).getAttribute('aria-describedby'), other).toBeNull();
    }

    // The field's own problem and the plan's, together.
    await w.get('input[name=storageCapacityGib]').setValue('-1');
    await w.get('input[name=storageCapacityGib]').trigger('change');
    expect(describedBy('storageCapacityGib')).toEqual([expect.stringContaining('Storage tier capacity must be a number of GiB'), expect.stringContaining('0.0001 cannot hold'), expect.stringContaining('cannot hold this suite')]);

    // A refusal to plan that names a field marks it too.
    answer = { error: { code: 'VALIDATION', message: '--model: unknown model "x"' } };
    await w.get('input[name=storageCapacityGib]').setValue('3');
    await w.get('input[name=storageCapacityGib]').trigger('change');
    await new Promise((r) => setTimeout(r, 300));
    await flush();
    expect(field('model').getAttribute('aria-invalid')).toBe('true');
    expect(describedBy('model')).toEqual([expect.stringContaining('“Model”: unknown model')]);

    // A plan without problems: nothing is marked any more.
    answer = { plan: plan(), hardware: hardware(), advice: [] };
    await w.get('input[name=storageCapacityGib]').setValue('4');
    await w.get('input[name=storageCapacityGib]').trigger('change');
    await new Promise((r) => setTimeout(r, 300));
    await flush();
    expect(w.findAll('.notice.error')).toHaveLength(0);
    for (const name of ['storageCapacityGib', 'planCacheDir', 'model']) {
      expect(field(name).getAttribute('aria-invalid'), name).not.toBe('true');
      expect(field(name).getAttribute('aria-describedby'), name).toBeNull();
    }
  });

  it("names the scenarios in the plan's notes as the Scenarios list does, not by the CLI's ids, as sentences", async () => {
    const p = plan();
    // The planner's notes as planSuite writes them, ids and all, for the CLI (planner.test and format-plan.test check those).
    p.notes = [
      '3 scenario(s) skipped: gpu-only, gpu-cpu, gpu-cpu-storage',
      'storage tiers shrunk to fit in RAM beside the CPU tier (22.0 GiB available, 2.40 GiB kept in reserve): cpu-only 7 GiB, production 7 GiB',
      'mlperf-storage-stress, mlperf-storage-throughput run the MLPerf options\' workloads at this profile\'s duration and storage capacity, not the reference options (300 s, 95 % of the free space: --profile mlperf)',
    ];
    installFakeApi({ 'suite.plan': () => ({ plan: p, hardware: hardware(), advice: [] }) });
    useWizardStore().cacheDir = '/mnt/kv';
    const w = mountIt(PlanStep);
    await flush();
    expect(w.findAll('.notes li').map((li) => li.text())).toEqual([
      '3 scenario(s) skipped: GPU only, GPU + CPU, GPU + CPU + storage.',
      'Storage tiers shrunk to fit in RAM beside the CPU tier (22.0 GiB available, 2.40 GiB kept in reserve): CPU only 7 GiB, Realistic production 7 GiB.',
      'MLPerf 1: storage stress (CPU 0), MLPerf 2: storage throughput (CPU 4 GiB) run the MLPerf options\' workloads at this profile\'s duration and storage capacity, not the reference options (300 s, 95 % of the free space: the MLPerf profile).',
    ]);
  });

  it('marks a scenario whose first requests alone overflow its tiers, and states the note\'s sizes in the units chosen in Settings', async () => {
    const p = plan();
    // planSuite's note and sizes for CPU only on a 24 GiB machine (planner.test checks those).
    const GiB = 2 ** 30;
    const first = 34.4 * GiB;
    p.runs[0].expectedSpill = { firstRoundBytes: first, namedTierBytes: 12 * GiB };
    p.notes = [
      "cpu-only is expected to spill to the drive: its 50 users' first requests alone write about 34.4 GiB of llama3.1-8b KV cache, more than the 80 % of its 12.0 GiB CPU tier filled before entries move down (9.60 GiB); its trials will be flagged spilled, their numbers partly the drive's (the tier sizes follow this machine's memory)",
    ];
    p.noteSizes = [[{ bytes: first, text: '34.4 GiB' }, { bytes: 12 * GiB, text: '12.0 GiB' }, { bytes: 9.6 * GiB, text: '9.60 GiB' }]];
    const w = await mountInUnits(PlanStep, 'decimal', '/mnt/kv', { 'suite.plan': () => ({ plan: p, hardware: hardware(), advice: [] }) });
    const marks = w.findAll('[data-test=expected-spill]');
    expect(marks).toHaveLength(1);
    expect(w.get('[data-run=cpu-only]').find('[data-test=expected-spill]').text()).toBe('! will spill');
    expect(marks[0].attributes('title')).toContain('write about 36.9 GB of KV cache, more than the 12.9 GB of tiers it names hold');
    expect(w.get('.notes li').text()).toBe(
      "CPU only is expected to spill to the drive: its 50 users' first requests alone write about 36.9 GB of llama3.1-8b KV cache, more than the 80 % of its 12.9 GB CPU tier filled before entries move down (10.3 GB); its trials will be flagged spilled, their numbers partly the drive's (the tier sizes follow this machine's memory).",
    );
  });

  it('refuses to start a suite that does not fit, and says why', async () => {
    installFakeApi({ 'suite.plan': () => ({ plan: plan({ fits: false }), hardware: hardware(), advice: [] }) });
    useWizardStore().cacheDir = '/tiny';
    const w = mountIt(PlanStep);
    await flush();
    expect(w.text()).toContain('The cache directory cannot hold this suite');
    expect(w.get('[data-test=start-suite]').attributes('disabled')).toBeDefined();
  });
});

describe('run step', () => {
  const ref = (trialIndex: number, scenarioId = 'cpu-only', label = 'CPU only', ordinal = 1): SuiteTrialRef => ({ suiteId: 7, trialId: 10 + ordinal, scenarioId, label, trialIndex, trialsPerScenario: 2, ordinal, total: 4 });
  /** The backend with no suite running: the one this page followed ended while it was not listening. */
  const idle: ResponseOf<'suite.status'> = { state: 'idle', suiteId: null, request: null, plan: null, startedAt: null, events: [] };
  /** The run screen following suite 7 of plan(), started from this page. */
  const followSuite7 = () => {
    const run = useLiveRunStore();
    run.runPlan = plan();
    const w = mountIt(RunStep);
    run.handleEvent({ type: 'suite.started', suiteId: 7, resumed: false, total: 4, estimatedSeconds: 22 });
    return { run, w };
  };

  it('follows the suite: current trial, live numbers, trial table, ETA, then the report button', async () => {
    installFakeApi({ 'suite.cancel': () => ({ cancelled: true }) });
    const wizard = useWizardStore();
    const run = useLiveRunStore();
    run.runPlan = plan();
    run.phase = 'preparing';
    const w = mountIt(RunStep);
    run.handleEvent({ type: 'suite.preparationProgressed', step: 'probing', message: 'Detecting hardware and probing the drive …' });
    await flush();
    expect(w.text()).toContain('probing the drive');
    run.handleEvent({ type: 'suite.started', suiteId: 7, resumed: false, total: 4, estimatedSeconds: 22 });
    run.handleEvent({ type: 'suite.trialStarted', enginePid: 123, ...ref(0) });
    run.handleEvent({
      type: 'suite.trialProgressed',
      ...ref(0),
      progress: {
        phase: 'running', elapsedNs: 1.5e9, durationNs: 3e9, requestsCompleted: 12, maxRequests: null, activeUsers: 4, queueDepth: 2, generatedTokens: 0, storageReadBytes: 0, storageWriteBytes: 0, generatedTokensPerSec: 321.5,
        storageReadBytesPerSec: 1.2e9, storageWriteBytesPerSec: 4e8, cpuReadBytesPerSec: 0, cpuWriteBytesPerSec: 0, e2eLatencyP95Ns: 2.5e7, storageReadP95Ns: 4e6, eventLoopLagP99Ns: null,
      },
    });
    await flush();
    expect(w.get('[data-test=current-trial]').text()).toBe('CPU only · trial 1 of 2');
    const text = w.text();
    expect(text).toContain('322');
    expect(text).toContain('1.20 GB/s');
    expect(text).toContain('25.0 ms');
    // The live charts follow every point, not only those there when they were drawn: latency in ms,
    // storage bandwidth on a GB/s axis.
    run.handleEvent({
      type: 'suite.trialProgressed',
      ...ref(0),
      progress: {
        phase: 'running', elapsedNs: 2e9, durationNs: 3e9, requestsCompleted: 15, maxRequests: null, activeUsers: 4, queueDepth: 1, generatedTokens: 0, storageReadBytes: 0, storageWriteBytes: 0, generatedTokensPerSec: 300,
        storageReadBytesPerSec: 1.4e9, storageWriteBytesPerSec: 5e8, cpuReadBytesPerSec: 0, cpuWriteBytesPerSec: 0, e2eLatencyP95Ns: 3e7, storageReadP95Ns: 5e6, eventLoopLagP99Ns: null,
      },
    });
    await flush();
    const [tputChart, latChart, userChart] = w.findAllComponents(LineChart);
    expect(latChart.props('series').map((s: LineSeries) => s.data)).toEqual([[25, 30], [4, 5]]);
    expect(tputChart.props('y2Title')).toBe('GB/s');
    expect(tputChart.props('series').map((s: LineSeries) => s.data)).toEqual([[321.5, 300], [1.2, 1.4], [0.4, 0.5]]);
    expect(userChart.props('series').map((s: LineSeries) => s.data)).toEqual([[4, 4], [2, 1]]);
    expect(w.get('[data-test=trials-done]').text()).toBe('0 / 4');
    expect(w.findAll('[data-test=trial-table] tbody tr')).toHaveLength(4);
    expect(w.get('[data-test=eta]').text()).toMatch(/≈ 2\d s/);

    run.handleEvent({ type: 'suite.trialFinished', status: 'complete', reason: null, wallMs: 5000, wallClockThroughputTokPerS: 300, storageReadBytesPerS: 1e9, ...ref(0) });
    run.handleEvent({ type: 'suite.trialStarted', enginePid: 124, ...ref(1, 'cpu-only', 'CPU only', 2) });
    run.handleEvent({ type: 'suite.trialFinished', status: 'failed', reason: 'ENGINE_CRASHED: killed by SIGKILL', wallMs: 800, wallClockThroughputTokPerS: null, storageReadBytesPerS: null, ...ref(1, 'cpu-only', 'CPU only', 2) });
    await flush();
    expect(w.get('[data-test=trials-done]').text()).toBe('2 / 4');
    const rows = w.findAll('[data-test=trial-table] tbody tr').map((r) => r.text());
    expect(rows[0]).toContain('complete');
    expect(rows[0]).toContain('300 tok/s');
    expect(rows[1]).toContain('failed');
    expect(rows[1]).toContain('ENGINE_CRASHED');

    // Cancel asks first.
    await w.get('[data-test=cancel-suite]').trigger('click');
    await flush();
    expect(document.body.textContent).toContain('Cancel the suite?');
    (document.querySelector('[data-test=confirm]') as HTMLButtonElement).click();
    await flush();
    expect(run.cancelRequested).toBe(true);

    run.handleEvent({ type: 'suite.finished', suiteId: 7, status: 'cancelled', outcome: 'cancelled', counts: { complete: 1, partial: 0, failed: 1, aborted: 2 }, wallMs: 9000 });
    await flush();
    expect(w.text()).toContain('Suite 7 was cancelled: 1 complete, 0 partial, 1 failed, 2 aborted');
    await w.get('[data-test=view-report]').trigger('click');
    expect(wizard.step).toBe('report');
  });

  it("keeps the last trial's card once the suite finished, on the stored figures, until the user leaves the step or another suite starts", async () => {
    installFakeApi({});
    const { run, w } = followSuite7();
    const at = (phase: 'running' | 'finishing', elapsedS: number, tokens: number) => ({
      phase, elapsedNs: elapsedS * 1e9, durationNs: 3e9, requestsCompleted: 8, maxRequests: null, activeUsers: 4, queueDepth: 0, generatedTokens: tokens, storageReadBytes: 3e9, storageWriteBytes: 1e9,
      generatedTokensPerSec: 0, storageReadBytesPerSec: 0, storageWriteBytesPerSec: 0, cpuReadBytesPerSec: 0, cpuWriteBytesPerSec: 0, e2eLatencyP95Ns: 2e7, storageReadP95Ns: null, eventLoopLagP99Ns: null,
    });
    run.handleEvent({ type: 'suite.trialStarted', enginePid: 123, ...ref(1, 'cpu-only', 'CPU only', 4) });
    run.handleEvent({ type: 'suite.trialProgressed', ...ref(1, 'cpu-only', 'CPU only', 4), progress: at('running', 2.9, 580) });
    run.handleEvent({ type: 'suite.trialProgressed', ...ref(1, 'cpu-only', 'CPU only', 4), progress: at('finishing', 3, 900) });
    run.handleEvent({ type: 'suite.trialFinished', status: 'complete', reason: null, wallMs: 5000, wallClockThroughputTokPerS: 300, storageReadBytesPerS: 1e9, ...ref(1, 'cpu-only', 'CPU only', 4) });
    run.handleEvent({ type: 'suite.finished', suiteId: 7, status: 'finished', outcome: 'finished', counts: { complete: 4, partial: 0, failed: 0, aborted: 0 }, wallMs: 20_000 });
    await flush();
    expect(w.get('[data-test=last-trial-head]').text()).toBe('Suite finished — last trial: CPU only (trial 2 of 2), stored as trial 14');
    expect(w.get('[data-test=last-trial]').classes()).toContain('ok');
    // 900 tokens ÷ 3 s and 3 GB ÷ 3 s: the stored figures, as the trial row has them.
    expect(w.get('[data-test=live-tput]').text()).toBe('300');
    expect(w.get('[data-test=live-storage]').text()).toBe('1.00 GB/s');
    expect(w.get('[data-test=live-tput-label]').text()).toBe('Throughput as stored');
    expect(w.find('[data-test=current-trial]').exists()).toBe(false);
    // Its charts stay with it: the trial's points as they came (the 'finishing' event adds none).
    const charts = w.findAllComponents(LineChart);
    expect(charts).toHaveLength(4);
    expect(charts[1].props('series').map((s: LineSeries) => s.data)).toEqual([[20], [null]]);
    expect(charts[1].props('title')).toBe('Latency of the last trial, P95 over its window');

    // Leaving the step: seen, so gone when the user comes back.
    w.unmount();
    const back = mountIt(RunStep);
    await flush();
    expect(back.find('[data-test=trial-card]').exists()).toBe(false);
    expect(back.findAllComponents(LineChart)).toHaveLength(0);
    expect(back.find('[data-test=outcome]').exists()).toBe(true);

    // A suite that ended while the user was away keeps it for when they come back; another suite's start clears it.
    run.handleEvent({ type: 'suite.preparationProgressed', step: 'detecting', message: 'Detecting hardware …' });
    run.handleEvent({ type: 'suite.started', suiteId: 8, resumed: false, total: 1, estimatedSeconds: 5 });
    run.handleEvent({ type: 'suite.trialStarted', enginePid: 125, ...ref(0), suiteId: 8, trialId: 20 });
    back.unmount(); // while it runs
    run.handleEvent({ type: 'suite.trialFinished', status: 'failed', reason: 'ENGINE_CRASHED: killed by SIGKILL', wallMs: 800, wallClockThroughputTokPerS: null, storageReadBytesPerS: null, ...ref(0), suiteId: 8, trialId: 20 });
    run.handleEvent({ type: 'suite.finished', suiteId: 8, status: 'finished', outcome: 'failed', counts: { complete: 0, partial: 0, failed: 1, aborted: 0 }, wallMs: 1000 });
    const again = mountIt(RunStep);
    await flush();
    expect(again.get('[data-test=last-trial-head]').text()).toBe('Suite failed — last trial: CPU only (trial 1 of 2), failed: nothing of it stored (trial 20)');
    expect(again.get('[data-test=last-trial-unstored]').text()).toBe('The numbers below are the last ones seen live: the trial stored none of them.');
    expect(again.findAllComponents(LineChart)).toHaveLength(4);
    run.handleEvent({ type: 'suite.preparationProgressed', step: 'detecting', message: 'Detecting hardware …' });
    await flush();
    expect(again.find('[data-test=trial-card]').exists()).toBe(false);
    expect(again.findAllComponents(LineChart)).toHaveLength(0);
  });

  it("shows the engine's memory beside the tiles and charts it, and says a trial measuring its queue, not the storage, above them, through its end", async () => {
    installFakeApi({});
    const { run, w } = followSuite7();
    const mib = 1024 ** 2;
    const at = (phase: 'running' | 'finishing', elapsedS: number, o: { rssMiB?: number; capReached?: boolean; boundAtClose?: boolean } = {}) => ({
      phase, elapsedNs: elapsedS * 1e9, durationNs: 3e9, requestsCompleted: 8, maxRequests: null, activeUsers: 4, queueDepth: 12, generatedTokens: 100, storageReadBytes: 3e9, storageWriteBytes: 1e9,
      generatedTokensPerSec: 0, storageReadBytesPerSec: 0, storageWriteBytesPerSec: 0, cpuReadBytesPerSec: 0, cpuWriteBytesPerSec: 0, e2eLatencyP95Ns: 2e7, storageReadP95Ns: null, eventLoopLagP99Ns: null,
      memory: o.rssMiB === undefined ? null : { rssBytes: o.rssMiB * mib, heapUsedBytes: 20 * mib, externalBytes: 200 * mib, arrayBuffersBytes: 190 * mib, byteWorkersHeapUsedBytes: null },
      backlog: {
        queueingBound: o.boundAtClose ?? false,
        atClose: phase === 'finishing',
        queueingFirstMet: null,
        traceOnly: false,
        capReached: o.capReached ?? false,
        capRequests: 12,
        queuedRequests: 12,
        workers: 8,
        issueLatenessMaxNs: o.capReached ? 71e6 : 0,
      },
    });
    const trial = ref(0, 'storage-only', 'Storage only', 3);
    run.handleEvent({ type: 'suite.trialStarted', enginePid: 123, ...trial });
    run.handleEvent({ type: 'suite.trialProgressed', ...trial, progress: at('running', 0.5) });
    await flush();
    // Before the first sample: no figure, no chart line, no warning.
    expect(w.get('[data-test=live-memory]').text()).toBe('—');
    expect(w.find('[data-test=queueing-mark]').exists()).toBe(false);
    run.handleEvent({ type: 'suite.trialProgressed', ...trial, progress: at('running', 1, { rssMiB: 400 }) });
    run.handleEvent({ type: 'suite.trialProgressed', ...trial, progress: at('running', 2, { rssMiB: 420, capReached: true }) });
    await flush();
    expect(w.get('[data-test=live-memory]').text()).toBe('440 MB');
    const memoryChart = w.findAllComponents(LineChart)[3]!;
    expect(memoryChart.props('yTitle')).toBe('MB');
    expect(memoryChart.props('series').map((s: LineSeries) => s.label)).toEqual(['RSS (MB)', 'JS heap in use (MB)', 'Array buffers (MB)']);
    expect(memoryChart.props('series')[0].data).toEqual([null, (400 * mib) / 1e6, (420 * mib) / 1e6]);
    const mark = w.get('[data-test=queueing-mark]');
    expect(mark.attributes('role')).toBe('alert');
    expect(w.get('[data-test=queueing-head]').text()).toBe('Queueing-bound: this trial measures its request queue, not the storage');
    expect(mark.text()).toContain('so far up to 71 ms behind schedule');
    expect(w.get('[data-test=row-queueing]').text()).toContain('queueing');
    // Binary units: the same bytes in MiB.
    useAppStore().settings = { ...SETTINGS, byteUnits: 'binary' };
    await flush();
    expect(w.get('[data-test=live-memory]').text()).toBe('420 MiB');
    expect(w.findAllComponents(LineChart)[3]!.props('series')[0].data).toEqual([null, 400, 420]);

    // Ended: the card is no success, and the warning stays with it.
    // Stored flagged queueing-bound (the close's verdict, on the 'finishing' event): the card warns, the row's mark says so.
    run.handleEvent({ type: 'suite.trialProgressed', ...trial, progress: at('finishing', 3, { rssMiB: 420, capReached: true, boundAtClose: true }) });
    run.handleEvent({ type: 'suite.trialFinished', status: 'complete', reason: null, wallMs: 5000, wallClockThroughputTokPerS: 33, storageReadBytesPerS: 1e9, ...trial });
    run.handleEvent({ type: 'suite.finished', suiteId: 7, status: 'finished', outcome: 'finished', counts: { complete: 1, partial: 0, failed: 0, aborted: 0 }, wallMs: 9000 });
    await flush();
    expect(w.get('[data-test=last-trial]').classes()).toContain('warn');
    expect(w.find('[data-test=queueing-mark]').exists()).toBe(true);
    expect(w.get('[data-test=queueing-head]').text()).toBe('Queueing-bound: this trial measured its request queue, not the storage');
    expect(w.get('[data-test=row-queueing]').attributes('title')).toMatch(/stored flagged queueing-bound/);
  });

  it('counts a cancelled suite\'s never-started trials as not run, not done: "2 / 4", 50 %, a warning bar', async () => {
    installFakeApi({});
    const { run, w } = followSuite7();
    run.handleEvent({ type: 'suite.trialStarted', enginePid: 123, ...ref(0) });
    run.handleEvent({ type: 'suite.trialFinished', status: 'complete', reason: null, wallMs: 5000, wallClockThroughputTokPerS: 300, storageReadBytesPerS: 1e9, ...ref(0) });
    run.handleEvent({ type: 'suite.trialStarted', enginePid: 124, ...ref(1, 'cpu-only', 'CPU only', 2) });
    run.handleEvent({ type: 'suite.trialFinished', status: 'aborted', reason: 'cancelled by the user', wallMs: 800, wallClockThroughputTokPerS: null, storageReadBytesPerS: null, ...ref(1, 'cpu-only', 'CPU only', 2) });
    run.handleEvent({ type: 'suite.finished', suiteId: 7, status: 'cancelled', outcome: 'cancelled', counts: { complete: 1, partial: 0, failed: 0, aborted: 1 }, wallMs: 9000 });
    await flush();
    expect(w.get('[data-test=trials-done]').text()).toBe('2 / 4');
    expect(w.get('[data-test=overall-bar]').attributes('aria-valuenow')).toBe('50');
    expect(w.get('[data-test=overall-bar]').classes()).toContain('warn');
    expect(w.get('[data-test=overall-bar]').classes()).not.toContain('ok');
    const rows = w.findAll('[data-test=trial-table] tbody tr').map((r) => r.text());
    expect(rows[1]).toContain('aborted');
    expect(rows[2]).toContain('not run');
    expect(rows[3]).toContain('not run');
    expect(w.text()).toContain('Suite 7 was cancelled: 1 complete, 0 partial, 0 failed, 1 aborted, 2 not run.');
    expect(w.get('[data-test=outcome]').classes()).toContain('warn');

    // A suite that finished cleanly has the green bar.
    run.handleEvent({ type: 'suite.finished', suiteId: 7, status: 'finished', outcome: 'finished', counts: { complete: 4, partial: 0, failed: 0, aborted: 0 }, wallMs: 9000 });
    await flush();
    expect(w.get('[data-test=overall-bar]').classes()).toContain('ok');
    expect(w.get('[data-test=outcome]').classes()).toContain('ok');
    expect(await styledNotices()).toEqual(expect.arrayContaining(['ok', 'warn', 'error']));
  });

  it('a suite that finished without one complete trial reads failed, in red: not a green "finished"', async () => {
    installFakeApi({});
    const { run, w } = followSuite7();
    for (const [i, r] of [ref(0), ref(1, 'cpu-only', 'CPU only', 2)].entries()) {
      run.handleEvent({ type: 'suite.trialStarted', enginePid: 123 + i, ...r });
      run.handleEvent({ type: 'suite.trialFinished', status: 'failed', reason: 'the engine could not be started: spawn ELOOP', wallMs: 800, wallClockThroughputTokPerS: null, storageReadBytesPerS: null, ...r });
    }
    run.handleEvent({ type: 'suite.finished', suiteId: 7, status: 'finished', outcome: 'failed', counts: { complete: 0, partial: 2, failed: 2, aborted: 0 }, wallMs: 9000 });
    await flush();
    expect(w.get('h2 .badge').text()).toBe('failed');
    expect(w.get('h2 .badge').classes()).toContain('failed');
    const outcome = w.get('[data-test=outcome]');
    // The notices' error style (the bar's own class, "err", styles no notice: the notice was uncoloured).
    expect(outcome.classes()).toContain('error');
    expect(await styledNotices()).toContain('error');
    expect(outcome.text()).not.toContain('✓');
    expect(outcome.text()).toContain('Suite 7 failed (none of its trials completed: nothing to report): 0 complete, 2 partial, 2 failed, 0 aborted.');
    expect(w.get('[data-test=overall-bar]').classes()).toContain('err');
  });

  it('a resume that completes a trial makes a failed suite finished; one that completes none of a suite with earlier complete trials leaves it finished', async () => {
    installFakeApi({});
    const { run, w } = followSuite7();
    run.handleEvent({ type: 'suite.finished', suiteId: 7, status: 'finished', outcome: 'finished', counts: { complete: 0, partial: 0, failed: 4, aborted: 0 }, wallMs: 9000 });
    await flush();
    expect(w.get('h2 .badge').text()).toBe('finished');
    expect(w.get('[data-test=overall-bar]').classes()).not.toContain('err');
  });

  it('a failed suite that ended unseen reads failed from its stored counts', async () => {
    installFakeApi({
      'suite.status': () => idle,
      'suites.list': () => [suiteRecord('finished', 7, { trialCounts: { running: 0, complete: 0, partial: 0, failed: 4, aborted: 0 }, trialsLeft: 4 })],
      'history.list': () => ({ trials: [0, 1].map((i) => trial(11 + i, { suiteId: 7, scenarioId: 'cpu-only', trialIndex: i, status: 'failed', statusReason: 'ENGINE_CRASHED', metrics: {} })), total: 2 }),
    });
    const { run, w } = followSuite7();
    await run.attach();
    await flush();
    expect(run.phase).toBe('finished');
    expect(w.get('h2 .badge').text()).toBe('failed');
    expect(w.get('[data-test=outcome]').classes()).toContain('error');
  });

  it('a cancel while the hardware is detected is the user\'s choice: no failure, nothing to resume, back to the plan', async () => {
    let answer: ((v: unknown) => void) | undefined;
    const fake = installFakeApi({
      'suite.plan': () => ({ plan: plan(), hardware: hardware(), advice: [] }),
      // The first start waits for its answer: the cancel's refusal (the fake passes { error } on as one).
      'suite.start': () => (answer ? { suiteId: 8 } : (new Promise((resolve) => (answer = resolve)) as never)),
      'suite.cancel': () => ({ cancelled: true }),
    });
    const wizard = useWizardStore();
    const run = useLiveRunStore();
    wizard.cacheDir = '/mnt/nvme/kv';
    await wizard.replan();
    const started = run.start();
    const w = mountIt(RunStep);
    run.handleEvent({ type: 'suite.preparationProgressed', step: 'probing', message: 'Detecting hardware and probing the drive …' });
    await flush();
    await w.get('[data-test=cancel-preparation]').trigger('click');
    await flush();
    // The dialog says what a cancel does now: nothing was stored, so nothing is kept or resumed.
    const dialog = document.body.textContent ?? '';
    expect(dialog).toContain('No trial has run yet');
    expect(dialog).toContain('nothing is stored');
    expect(dialog).not.toContain('resume');
    (document.querySelector('[data-test=confirm]') as HTMLButtonElement).click();
    await flush();
    expect(fake.callsOf('suite.cancel')).toHaveLength(1);
    // The backend says so twice: the event, and the answer to run.start.
    run.handleEvent({ type: 'suite.failed', suiteId: null, error: { code: 'CANCELLED', message: 'cancelled before the first trial' } });
    answer!({ error: { code: 'CANCELLED', message: 'cancelled before the first trial' } });
    await started;
    await flush();
    expect(run.phase).toBe('not-started');
    expect(w.get('[data-test=not-started]').text()).toContain('Cancelled before anything ran: no suite was created and nothing was stored.');
    expect(w.find('[role=alert]').exists()).toBe(false);
    expect(w.find('.badge.failed').exists()).toBe(false);
    expect(w.find('[data-test=trial-table]').exists()).toBe(false);
    expect(w.find('[data-test=view-report]').exists()).toBe(false);
    await w.get('[data-test=not-started] button').trigger('click');
    expect(wizard.step).toBe('plan');
    expect(wizard.planCurrent).toBe(true); // the plan is still there, to start again

    // Started again, the running suite's cancel still says what it keeps.
    await run.start();
    run.handleEvent({ type: 'suite.started', suiteId: 8, resumed: false, total: 4, estimatedSeconds: 22 });
    await flush();
    await w.get('[data-test=cancel-suite]').trigger('click');
    await flush();
    expect(document.body.textContent).toContain('partial results are kept');
  });

  it('fetches the plan of a suite started elsewhere (another tab), keeping the events that arrive meanwhile', async () => {
    let answer!: (v: ResponseOf<'suite.status'>) => void;
    const fake = installFakeApi({ 'suite.status': () => new Promise((resolve) => (answer = resolve)) });
    const run = useLiveRunStore();
    const w = mountIt(RunStep);
    const prep: AppEvent = { type: 'suite.preparationProgressed', step: 'probing', message: 'Probing …' };
    const started: AppEvent = { type: 'suite.started', suiteId: 7, resumed: false, total: 4, estimatedSeconds: 22 };
    const t0: AppEvent = { type: 'suite.trialStarted', enginePid: 123, ...ref(0) };
    const f0: AppEvent = { type: 'suite.trialFinished', status: 'complete', reason: null, wallMs: 5500, wallClockThroughputTokPerS: 300, storageReadBytesPerS: 1e9, ...ref(0) };
    const t1: AppEvent = { type: 'suite.trialStarted', enginePid: 124, ...ref(1, 'cpu-only', 'CPU only', 2) };
    run.handleEvent(prep);
    run.handleEvent(started);
    expect(fake.callsOf('suite.status')).toHaveLength(1);
    // While the status request is on its way the suite goes on; the snapshot is taken after f0.
    for (const e of [t0, f0, t1]) run.handleEvent(e);
    answer({ state: 'running', suiteId: 7, request: null, plan: plan(), startedAt: new Date().toISOString(), events: [prep, started, t0, f0] });
    await flush();
    expect(w.get('[data-test=trials-done]').text()).toBe('1 / 4');
    expect(run.counts.complete).toBe(1); // f0 applied once, though it came both ways
    const rows = w.findAll('[data-test=trial-table] tbody tr').map((r) => r.text());
    expect(rows).toHaveLength(4);
    expect(rows[1]).toContain('running'); // t1, which only the stream had
    expect(rows[2]).toContain('≈ 6 s');
    expect(w.get('[data-test=eta]').text()).toMatch(/≈ 1[67] s/);
  });

  it('after the server restarted mid-run, shows the suite as interrupted, as stored: the aborted trial, the rest not run, a pointer to Resume', async () => {
    const reason = 'interrupted: the runner process 4242 on lab1 ended while this trial was running (killed or crashed); found at the next start';
    const fake = installFakeApi({
      'suite.status': () => idle,
      'suites.list': () => [suiteRecord('finished', 6), suiteRecord('interrupted', 7, { trialCounts: { running: 0, complete: 0, partial: 0, failed: 0, aborted: 1 } })],
      'history.list': () => ({ trials: [trial(11, { suiteId: 7, scenarioId: 'cpu-only', trialIndex: 0, status: 'aborted', statusReason: reason, wallMs: 10_200, metrics: {} })], total: 1 }),
    });
    const { run, w } = followSuite7();
    run.handleEvent({ type: 'suite.trialStarted', enginePid: 123, ...ref(0) });
    await flush();
    // The server is killed and comes back: the page reconnects and finds the backend idle.
    await run.attach();
    await flush();
    expect(fake.callsOf('history.list')).toEqual([{ selection: { suiteIds: [7] }, sort: { key: 'id', dir: 'asc' }, limit: 5000 }]);
    expect(run.phase).toBe('interrupted');
    expect(w.get('h2 .badge').text()).toBe('interrupted');
    const outcome = w.get('[data-test=outcome]');
    expect(outcome.classes()).toContain('warn');
    expect(outcome.text()).not.toContain('✓');
    expect(outcome.text()).toContain('Suite 7 was interrupted (the server stopped while it ran): 0 complete, 0 partial, 0 failed, 1 aborted, 3 not run.');
    expect(outcome.text()).toContain('resume the suite from History → Suites');
    expect(w.get('[data-test=overall-bar]').classes()).toContain('warn');
    expect(w.get('[data-test=eta]').text()).toBe('0 s');
    expect(w.findAll('[data-test=trial-table] tbody .badge').map((b) => b.text())).toEqual(['aborted', 'not run', 'not run', 'not run']);
    const rows = w.findAll('[data-test=trial-table] tbody tr').map((r) => r.text());
    expect(rows[0]).toContain('interrupted: the runner process 4242');
    expect(rows.some((r) => r.includes('≈'))).toBe(false); // no queued trial's estimate left
    // The trial it was running keeps its card, which says how it ended: nothing of it stored.
    const last = w.get('[data-test=last-trial]');
    expect(last.classes()).toContain('error');
    expect(w.get('[data-test=last-trial-head]').text()).toBe('Suite interrupted — last trial: CPU only (trial 1 of 2), stopped: nothing of it stored (trial 11)');
    expect(w.get('[data-test=last-trial-reason]').text()).toContain('interrupted: the runner process 4242');
    await w.get('[data-test=open-history]').trigger('click');
    expect(window.location.hash).toBe('#/history');
  });

  it('a cancel that failed while the server was down gives way to the stored outcome once the server is back: no stale error, the interrupted summary and its Resume pointer', async () => {
    let serverUp = false;
    const down = { error: { code: 'UNREACHABLE' as const, message: 'Cannot reach the kvbench server (Failed to fetch). Is kvbench serve still running?' } };
    installFakeApi({
      'suite.cancel': () => down,
      'suite.status': () => (serverUp ? idle : down),
      'suites.list': () => [suiteRecord('interrupted', 7, { trialCounts: { running: 0, complete: 0, partial: 0, failed: 0, aborted: 1 } })],
      'history.list': () => ({ trials: [trial(11, { suiteId: 7, scenarioId: 'cpu-only', trialIndex: 0, status: 'aborted', statusReason: 'interrupted: the runner process 4242 on lab1 ended', wallMs: 6_000, metrics: {} })], total: 1 }),
    });
    const { run, w } = followSuite7();
    run.handleEvent({ type: 'suite.trialStarted', enginePid: 123, ...ref(0) });
    await flush();
    await w.get('[data-test=cancel-suite]').trigger('click');
    await flush();
    (document.querySelector('[data-test=confirm]') as HTMLButtonElement).click();
    await flush();
    expect(w.get('[role=alert]').text()).toContain('Cannot reach the kvbench server');
    serverUp = true;
    await run.attach();
    await flush();
    expect(run.phase).toBe('interrupted');
    expect(w.find('[role=alert]').exists()).toBe(false);
    expect(run.cancelRequested).toBe(false);
    expect(w.get('[data-test=outcome]').text()).toContain('Suite 7 was interrupted (the server stopped while it ran): 0 complete, 0 partial, 0 failed, 1 aborted, 3 not run.');
    expect(w.get('[data-test=outcome]').text()).toContain('resume the suite from History → Suites');
    expect(w.find('[data-test=open-history]').exists()).toBe(true);
  });

  it('an interrupted suite no longer in the database states no counts', async () => {
    installFakeApi({ 'suite.status': () => idle, 'suites.list': () => [], 'history.list': () => ({ trials: [], total: 0 }) });
    const { run, w } = followSuite7();
    await run.attach();
    await flush();
    expect(run.phase).toBe('interrupted');
    expect(w.get('[role=alert]').text()).toContain('Suite 7 is not in the database any more');
    expect(w.find('[data-test=outcome]').exists()).toBe(false);
  });

  it('after a lost connection, a suite that ended cleanly meanwhile is finished, with its stored trials; one still being prepared is not claimed to have run', async () => {
    const done = (i: number, scenarioId: string) => trial(11 + i, { suiteId: 7, scenarioId, trialIndex: i % 2, wallMs: 5500 });
    installFakeApi({
      'suite.status': () => idle,
      'suites.list': () => [suiteRecord('finished', 7, { finishedAt: new Date().toISOString(), trialCounts: { running: 0, complete: 4, partial: 0, failed: 0, aborted: 0 } })],
      'history.list': () => ({ trials: [done(0, 'cpu-only'), done(1, 'cpu-only'), done(2, 'storage-only'), done(3, 'storage-only')], total: 4 }),
    });
    const { run, w } = followSuite7();
    await run.attach();
    await flush();
    expect(run.phase).toBe('finished');
    expect(w.get('[data-test=outcome]').classes()).toContain('ok');
    expect(w.get('[data-test=trials-done]').text()).toBe('4 / 4');
    expect(w.findAll('[data-test=trial-table] tbody tr').map((r) => r.text()).every((r) => r.includes('complete'))).toBe(true);

    setActivePinia(createPinia());
    installFakeApi({ 'suite.status': () => idle });
    const prepared = useLiveRunStore();
    const w2 = mountIt(RunStep);
    prepared.handleEvent({ type: 'suite.preparationProgressed', step: 'probing', message: 'Probing …' });
    await prepared.attach();
    await flush();
    expect(prepared.phase).toBe('not-started');
    expect(w2.get('[data-test=not-started]').text()).toContain('no longer running');
    expect(w2.find('[data-test=outcome]').exists()).toBe(false);
  });

  it('says what a resume ran, as the resume\'s, and where the whole suite stands; a finished suite with trials that did not complete points to Resume', async () => {
    const fake = installFakeApi({ 'suites.list': () => [suiteRecord('finished', 7, { trialCounts: { running: 0, complete: 4, partial: 0, failed: 1, aborted: 0 }, trialsLeft: 0 })] });
    const run = useLiveRunStore();
    run.runPlan = plan();
    const w = mountIt(RunStep);
    // Resumed from History: three of the four slots had no complete attempt.
    run.handleEvent({ type: 'suite.started', suiteId: 7, resumed: true, total: 3, estimatedSeconds: 16.5 });
    const slots = [ref(1, 'cpu-only', 'CPU only', 2), ref(0, 'storage-only', 'Storage only', 3), ref(1, 'storage-only', 'Storage only', 4)];
    for (const r of slots) {
      run.handleEvent({ type: 'suite.trialStarted', enginePid: 200, ...r });
      run.handleEvent({ type: 'suite.trialFinished', status: 'complete', reason: null, wallMs: 5000, wallClockThroughputTokPerS: 300, storageReadBytesPerS: 1e9, ...r });
    }
    run.handleEvent({ type: 'suite.finished', suiteId: 7, status: 'finished', outcome: 'finished', counts: { complete: 3, partial: 0, failed: 0, aborted: 0 }, wallMs: 16_000 });
    await flush();
    expect(fake.callsOf('suites.list')).toEqual([{ systemIds: ['sys-1'], limit: 10_000 }]);
    const outcome = w.get('[data-test=outcome]');
    expect(outcome.text()).toContain('Suite 7 finished: this resume ran 3 trials (3 complete, 0 partial, 0 failed, 0 aborted); the suite now has 4 of 4 complete.');
    expect(outcome.text()).not.toContain('resume the suite');
    expect(outcome.classes()).toContain('ok');
    expect(w.find('[data-test=open-history]').exists()).toBe(false);
    expect(w.text()).toContain('Trials this resume');
    expect(w.text()).toContain('suite: 4 of 4 complete');

    // A suite that finished, but with an aborted trial: Resume would run that slot again.
    setActivePinia(createPinia());
    installFakeApi({});
    const { run: again, w: w2 } = followSuite7();
    again.handleEvent({ type: 'suite.trialStarted', enginePid: 123, ...ref(0) });
    again.handleEvent({ type: 'suite.trialFinished', status: 'aborted', reason: 'timed out after its 126 s wall-clock limit', wallMs: 126_000, wallClockThroughputTokPerS: null, storageReadBytesPerS: null, ...ref(0) });
    again.handleEvent({ type: 'suite.finished', suiteId: 7, status: 'finished', outcome: 'finished', counts: { complete: 3, partial: 0, failed: 0, aborted: 1 }, wallMs: 140_000 });
    await flush();
    const outcome2 = w2.get('[data-test=outcome]');
    expect(outcome2.text()).toContain('Suite 7 finished: 3 complete, 0 partial, 0 failed, 1 aborted.');
    expect(outcome2.text()).toContain('resume the suite from History → Suites to run each trial that has no complete result yet');
    expect(outcome2.classes()).toContain('warn');
    await w2.get('[data-test=open-history]').trigger('click');
    expect(window.location.hash).toBe('#/history');
  });

  it('after a stopped re-run of a deleted trial, points to Run deleted trials again, not to Resume, which would not run it', async () => {
    // Suite 7 as stored after the stop: the re-run's attempt aborted, its slot still deleted, nothing left for Resume.
    installFakeApi({ 'suites.list': () => [suiteRecord('cancelled', 7, { trialCounts: { running: 0, complete: 3, partial: 0, failed: 0, aborted: 1 }, trialsLeft: 0, trialsDeleted: 1 })] });
    const run = useLiveRunStore();
    run.runPlan = plan();
    const w = mountIt(RunStep);
    const slot = { ...ref(1, 'storage-only', 'Storage only', 1), total: 1 };
    run.handleEvent({ type: 'suite.started', suiteId: 7, resumed: true, total: 1, estimatedSeconds: 5.5 });
    run.handleEvent({ type: 'suite.trialStarted', enginePid: 200, ...slot });
    run.handleEvent({ type: 'suite.trialFinished', status: 'aborted', reason: 'cancelled by the user; partial results kept', wallMs: 900, wallClockThroughputTokPerS: null, storageReadBytesPerS: null, ...slot });
    run.handleEvent({ type: 'suite.finished', suiteId: 7, status: 'cancelled', outcome: 'cancelled', counts: { complete: 0, partial: 0, failed: 0, aborted: 1 }, wallMs: 1000 });
    await flush();
    const outcome = w.get('[data-test=outcome]');
    expect(outcome.text()).toContain('the suite now has 3 of 4 complete (1 deleted)');
    expect(outcome.text()).not.toContain('resume the suite');
    expect(outcome.text()).toContain('to run its 1 deleted trial again (Resume does not): History → Suites, Run deleted trials again.');
    expect(outcome.classes()).toContain('warn');
    expect(w.find('[data-test=open-history]').exists()).toBe(true);
  });

  it('reads an interrupted resume back with its own trials only, not every attempt the suite has stored', async () => {
    const stored = [
      trial(11, { suiteId: 7, scenarioId: 'cpu-only', trialIndex: 0, status: 'complete', wallMs: 5500 }),
      trial(12, { suiteId: 7, scenarioId: 'cpu-only', trialIndex: 1, status: 'aborted', statusReason: 'cancelled by the user', wallMs: 800 }),
      trial(13, { suiteId: 7, scenarioId: 'storage-only', trialIndex: 0, status: 'complete', wallMs: 5500 }),
      trial(14, { suiteId: 7, scenarioId: 'storage-only', trialIndex: 1, status: 'complete', wallMs: 5500 }),
      // This resume's one trial, found running at the next start.
      trial(20, { suiteId: 7, scenarioId: 'cpu-only', trialIndex: 1, status: 'aborted', statusReason: 'interrupted: the runner process 4242 on lab1 ended', wallMs: 2000 }),
    ];
    installFakeApi({
      'suite.status': () => idle,
      'suites.list': () => [suiteRecord('interrupted', 7, { trialCounts: { running: 0, complete: 3, partial: 0, failed: 0, aborted: 2 }, trialsLeft: 1 })],
      'history.list': () => ({ trials: stored, total: stored.length }),
    });
    const run = useLiveRunStore();
    run.runPlan = plan();
    const w = mountIt(RunStep);
    run.handleEvent({ type: 'suite.started', suiteId: 7, resumed: true, total: 1, estimatedSeconds: 5.5 });
    run.handleEvent({ type: 'suite.trialStarted', enginePid: 300, ...ref(1, 'cpu-only', 'CPU only', 2), trialId: 20 });
    await run.attach();
    await flush();
    expect(run.phase).toBe('interrupted');
    expect(w.get('[data-test=outcome]').text()).toContain(
      'Suite 7 was interrupted (the server stopped while it ran): this resume ran 1 trial (0 complete, 0 partial, 0 failed, 1 aborted); the suite now has 3 of 4 complete.',
    );
    expect(w.get('[data-test=trials-done]').text()).toBe('1 / 1');
    expect(w.findAll('[data-test=trial-table] tbody tr')).toHaveLength(1);
    expect(w.find('[data-test=open-history]').exists()).toBe(true);
  });

  it('after a reload, counts the elapsed time from the suite\'s own start', async () => {
    const started: AppEvent = { type: 'suite.started', suiteId: 7, resumed: false, total: 4, estimatedSeconds: 22 };
    const startedAt = new Date(Date.now() - 90_000).toISOString();
    installFakeApi({ 'suite.status': () => ({ state: 'running', suiteId: 7, request: null, plan: plan(), startedAt, events: [started] }) });
    const run = useLiveRunStore();
    const w = mountIt(RunStep);
    await run.attach();
    await flush();
    expect(run.startedAtMs).toBe(Date.parse(startedAt));
    expect(w.text()).toContain('1 min 30 s');
  });

  it('estimates a resumed suite from its plan, also the trials that have not started yet', async () => {
    const started: AppEvent = { type: 'suite.started', suiteId: 7, resumed: true, total: 2, estimatedSeconds: 11 };
    installFakeApi({ 'suite.status': () => ({ state: 'running', suiteId: 7, request: null, plan: plan(), startedAt: new Date().toISOString(), events: [started] }) });
    const run = useLiveRunStore();
    const w = mountIt(RunStep);
    run.handleEvent({ type: 'suite.preparationProgressed', step: 'probing', message: 'Probing …' });
    run.handleEvent(started);
    await flush();
    run.handleEvent({ type: 'suite.trialStarted', enginePid: 124, ...ref(1, 'storage-only', 'Storage only', 3) });
    await flush();
    expect(run.rows.map((r) => r.estimatedS)).toEqual([5.5]);
    expect(w.get('[data-test=trials-done]').text()).toBe('0 / 2');
    expect(w.get('[data-test=eta]').text()).toMatch(/≈ 1[01] s/); // the running trial and the one not yet seen
  });

  it('charts a trial with a warm-up on one time axis: the measured window carries on where the warm-up ended', () => {
    const run = useLiveRunStore();
    run.runPlan = plan();
    run.handleEvent({ type: 'suite.started', suiteId: 7, resumed: false, total: 4, estimatedSeconds: 22 });
    run.handleEvent({ type: 'suite.trialStarted', enginePid: 123, ...ref(0) });
    const progress = (phase: 'warming-up' | 'running' | 'draining', elapsedS: number, tokPerS: number) =>
      run.handleEvent({
        type: 'suite.trialProgressed',
        ...ref(0),
        progress: {
          phase, elapsedNs: elapsedS * 1e9, durationNs: 3e9, requestsCompleted: 1, maxRequests: null, activeUsers: 4, queueDepth: 0, generatedTokens: 0, storageReadBytes: 0, storageWriteBytes: 0, generatedTokensPerSec: tokPerS,
          storageReadBytesPerSec: 0, storageWriteBytesPerSec: 0, cpuReadBytesPerSec: 0, cpuWriteBytesPerSec: 0, e2eLatencyP95Ns: null, storageReadP95Ns: null, eventLoopLagP99Ns: null,
        },
      });
    progress('warming-up', 1, 10);
    progress('warming-up', 2, 20);
    progress('running', 0.5, 30); // the window's own clock starts again at 0
    progress('running', 1.5, 40);
    progress('draining', 1.7, 0); // draining goes on with the window's clock
    expect(run.series.t).toEqual([1, 2, 2.5, 3.5, 3.7]);
    expect(run.series.tokPerS).toEqual([10, 20, 30, 40, 0]);
    // The next trial starts its chart from zero.
    run.handleEvent({ type: 'suite.trialStarted', enginePid: 124, ...ref(1, 'cpu-only', 'CPU only', 2) });
    run.handleEvent({
      type: 'suite.trialProgressed',
      ...ref(1, 'cpu-only', 'CPU only', 2),
      progress: {
        phase: 'running', elapsedNs: 0.5e9, durationNs: 3e9, requestsCompleted: 1, maxRequests: null, activeUsers: 4, queueDepth: 0, generatedTokens: 0, storageReadBytes: 0, storageWriteBytes: 0, generatedTokensPerSec: 5,
        storageReadBytesPerSec: 0, storageWriteBytesPerSec: 0, cpuReadBytesPerSec: 0, cpuWriteBytesPerSec: 0, e2eLatencyP95Ns: null, storageReadP95Ns: null, eventLoopLagP99Ns: null,
      },
    });
    expect(run.series.t).toEqual([0.5]);
  });

  it('keeps the chart within the trial\'s own time at its end: draining and finishing start no new clock, and finishing adds no point', () => {
    const run = useLiveRunStore();
    run.runPlan = plan();
    run.handleEvent({ type: 'suite.started', suiteId: 7, resumed: false, total: 4, estimatedSeconds: 22 });
    run.handleEvent({ type: 'suite.trialStarted', enginePid: 123, ...ref(0) });
    const progress = (phase: 'running' | 'draining' | 'finishing', elapsedS: number, tokPerS: number, users: number) =>
      run.handleEvent({
        type: 'suite.trialProgressed',
        ...ref(0),
        progress: {
          phase, elapsedNs: elapsedS * 1e9, durationNs: 6e9, requestsCompleted: 1, maxRequests: null, activeUsers: users, queueDepth: 0, generatedTokens: 0, storageReadBytes: 0, storageWriteBytes: 0, generatedTokensPerSec: tokPerS,
          storageReadBytesPerSec: 0, storageWriteBytesPerSec: 0, cpuReadBytesPerSec: 0, cpuWriteBytesPerSec: 0, e2eLatencyP95Ns: null, storageReadP95Ns: null, eventLoopLagP99Ns: null,
        },
      });
    progress('running', 5.5, 1300, 8);
    progress('running', 6.0, 1378, 8);
    progress('draining', 6.045, 1200, 8); // the progress timer goes on while requests in flight end
    progress('draining', 6.02, 1100, 8); // an early draining sample: dropped, not taken as a new clock
    progress('finishing', 6.001, 0, 0); // the window's end, with the engine's default zeros
    expect(run.series.t).toEqual([5.5, 6, 6.045]);
    expect(run.series.tokPerS).toEqual([1300, 1378, 1200]);
    expect(run.series.users).toEqual([8, 8, 8]);
    expect(run.progress?.phase).toBe('finishing'); // the trial's phase still says so
  });
});
