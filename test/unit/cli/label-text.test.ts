// Labels (system, drive and suite labels) are printed raw in tables and messages: an ESC sequence in
// one cleared the screen, a newline forged a row of `kvbench history`, a bidirectional override
// reversed what followed. Control characters and bidirectional overrides are refused where a label
// comes in (the command line and the app's API, one shared check), and a label stored before that
// (an older database) is escaped where the CLI prints text.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { exportCommand } from '../../../src-main/cli/export-command.ts';
import { historyCommand } from '../../../src-main/cli/history-command.ts';
import { main } from '../../../src-main/cli/main.ts';
import { importCommand } from '../../../src-main/cli/import-command.ts';
import { reportCommand } from '../../../src-main/cli/report-command.ts';
import { suiteCommand } from '../../../src-main/cli/suite-command.ts';
import { openDatabase } from '../../../src-main/store/sqlite.ts';
import { jsonText, labelTextProblem, printable, shownInput } from '../../../src-shared/domain/label-text.ts';
import { testBackend, type TestBackend } from '../server/backend-harness.ts';
import { kvbenchResults, referenceResultsNew, removeTempDirs, tempDir, writeResults } from '../store/fixtures.ts';
import { runInProcess as run } from './in-process.ts';

const open: TestBackend[] = [];
afterEach(async () => {
  for (const t of open.splice(0)) await t.backend.close();
  removeTempDirs();
});

const HOSTILE = ['\u001b[2J\u001b[31mRED', 'L1\nfake row', '\u202eevil', 'a\u0000b', 'x\u0085y', 'iso\u2066late'];

describe('labels with control characters or bidirectional overrides', () => {
  it('the shared check names what it found; ordinary text (commas, quotes, accents, emoji) passes', () => {
    expect(labelTextProblem('--system', '\u001b[2J')).toBe('--system must not hold control characters, line breaks or bidirectional overrides (found U+001B)');
    for (const label of HOSTILE) expect(labelTextProblem('x', label), label).not.toBeNull();
    for (const label of ['drive A, firmware 2.1', 'lab "Y"', 'Büro-Rechner', 'rig 🚀', '=HYPERLINK("x")']) expect(labelTextProblem('x', label)).toBeNull();
    expect(printable('a\u001b[2J\nb\u202e')).toBe('a\\u{1b}[2J\\u{a}b\\u{202e}');
  });

  it('import refuses them in --system, --drive and --label; suite in --label; nothing is stored', async () => {
    const dir = tempDir();
    const db = path.join(dir, 'kvbench.db');
    const file = writeResults(dir, 'r1.json', kvbenchResults({ tokPerS: 100 }));
    const r = await run(() => importCommand([file, '--system', '\u001b[2J\u001b[31mRED', '--drive', 'd\u202e', '--label', 'L1\nfake row', '--db', db]));
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      'kvbench import: invalid arguments:\n' +
        '  --system must not hold control characters, line breaks or bidirectional overrides (found U+001B)\n' +
        '  --drive must not hold control characters, line breaks or bidirectional overrides (found U+202E)\n' +
        '  --label must not hold control characters, line breaks or bidirectional overrides (found U+000A)\n',
    );
    const suite = await run(() => suiteCommand(['--plan', '--cache-dir', dir, '--label', 'fw\u00002.1', '--db', db]));
    expect(suite.code).toBe(1);
    expect(suite.stderr).toContain('--label must not hold control characters, line breaks or bidirectional overrides (found U+0000)');
  });

  it("the API's import.results and suite.start refuse them as VALIDATION", async () => {
    const t = await testBackend();
    open.push(t);
    const files = [{ name: 'r.json', text: JSON.stringify(referenceResultsNew({ tokPerS: 10, storageTokPerS: 5 })) }];
    for (const extra of [{ systemLabel: '\u202eevil\u0000' }, { systemLabel: 'ok', label: 'a\nb' }, { systemLabel: 'ok', driveLabel: '\u001b]0;x\u0007' }]) {
      expect(await t.backend.invoke('import.results', { files, ...extra }), JSON.stringify(extra)).toMatchObject({ ok: false, error: { code: 'VALIDATION' } });
    }
    expect(await t.backend.invoke('history.facets', {})).toMatchObject({ ok: true, value: { trialCount: 0 } });
    expect(await t.backend.invoke('suite.start', { cacheDir: t.cacheDir, profile: 'smoke', label: 'x\u001by' })).toMatchObject({ ok: false, error: { code: 'VALIDATION' } });
    // An empty filter in the API's selection is refused too, not read as "no filter"; so is a lenient date.
    for (const selection of [{ model: '' }, { since: ' ' }, { since: '99999-01-01' }, { until: '2026-02-30' }]) {
      expect(await t.backend.invoke('history.list', { selection }), JSON.stringify(selection)).toMatchObject({ ok: false, error: { code: 'VALIDATION' } });
    }
  });

  it('labels stored before the check (an older database) are escaped in history and report text', async () => {
    const dir = tempDir();
    const db = path.join(dir, 'kvbench.db');
    const file = writeResults(dir, 'r1.json', kvbenchResults({ tokPerS: 100 }));
    expect((await run(() => importCommand([file, '--system', 'lab', '--label', 'fw', '--db', db]))).code).toBe(0);
    const raw = openDatabase(db);
    raw.prepare("UPDATE systems SET label = ?").run('\u001b[2J\u001b[31mRED');
    raw.prepare("UPDATE suites SET label = ?").run('L1\nfake row');
    raw.close();
    const outputs = [
      await run(() => historyCommand(['--db', db])),
      await run(() => historyCommand(['--db', db, '--systems'])),
      await run(() => historyCommand(['--db', db, '--suites'])),
      await run(() => reportCommand(['--db', db, '--all'])),
      await run(() => historyCommand(['--db', db, '--system', 'imp-'])), // the "matches" / "no system" error quotes labels
    ];
    for (const o of outputs) {
      expect(o.stdout + o.stderr).not.toMatch(/[\u001b\u202e]|fake row\n|L1\n/);
    }
    expect(outputs[1].stdout).toContain('\\u{1b}[2J\\u{1b}[31mRED');
    expect(outputs[2].stdout).toContain('L1\\u{a}fake row');
  });

  it('an unknown value given to a flag is quoted escaped and, when long, cut, by import --scenario and the other commands that echo one', async () => {
    const long = `\u001b[2J\u202e${'y'.repeat(5000)}`;
    expect(shownInput('storage_only')).toBe('storage_only');
    expect(shownInput(long)).toBe(`\\u{1b}[2J\\u{202e}${'y'.repeat(54)}… (5005 characters)`);
    expect(shownInput('🚀'.repeat(70))).toBe(`${'🚀'.repeat(59)}… (70 characters)`); // cut between characters, not inside one
    const dir = tempDir();
    const file = writeResults(dir, 'r1.json', kvbenchResults({ tokPerS: 100 }));
    const db = path.join(dir, 'kvbench.db');
    expect((await run(() => importCommand([file, '--system', 'lab', '--db', db]))).code).toBe(0);
    const echoes = [
      await run(() => importCommand([file, '--system', 'lab', '--scenario', long, '--db', db])),
      await run(() => main(['probe', '--dir', dir, '--only', long])),
      await run(() => main(['suite', '--plan', '--cache-dir', dir, '--profile', long, '--db', db])),
      await run(() => main(['run', long, `--model=${long}`, `--${long}`])),
      await run(() => main(['history', '--db', db, '--status', long])),
      await run(() => main(['history', '--db', db, `--${long}`])),
      await run(() => main(['suite', '--plan', '--cache-dir', dir, '--scenarios', long, '--db', db])),
      await run(() => main(['workload', 'generate', '--out', path.join(dir, 'w.json'), long])),
      await run(() => main(['endpoint', 'run', '--url', long, '--model', 'm', '--workload', file, '--db', db])),
      await run(() => main(['probe', '--dir', dir, '--size-gib', long])),
      await run(() => main(['run', '--num-users', long])),
    ];
    for (const e of echoes) {
      expect(e.code, e.stderr).toBe(1);
      expect(e.stderr).toMatch(/… \(500[57] characters\)/);
      expect(e.stderr, e.stderr).not.toMatch(/[\u001b\u202e]|y{100}/);
    }
    expect(echoes[0].stderr).toBe(`kvbench import: invalid arguments:\n  --scenario: unknown scenario '${shownInput(long)}'\n`);
    // A results file's name (from a shell glob over a shared folder, say) is printed escaped, whole.
    const named = path.join(dir, 'r\u001b[2J\u202e.json');
    fs.copyFileSync(file, named);
    const bad = path.join(dir, 'bad\u001b]0;x\u0007.json');
    fs.writeFileSync(bad, '{');
    for (const files of [[named, bad], [bad, named]]) {
      const imported = await run(() => importCommand([...files, '--system', 'lab2', '--db', path.join(dir, `${files.length}-${files[0].length}.db`)]));
      const merged = await run(() => main(['merge', ...files, '--output', path.join(dir, 'm.json')]));
      for (const o of [imported, merged]) expect(o.stdout + o.stderr, o.stdout + o.stderr).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/);
      expect(imported.stdout + imported.stderr).toContain('r\\u{1b}[2J\\u{202e}.json');
      expect(merged.stderr).toContain('bad\\u{1b}]0;x\\u{7}.json');
    }
  });

  it('JSON output keeps a stored label exactly, as data, but writes each character a terminal acts on as a \\u escape', async () => {
    // JSON.stringify escapes C0 controls itself; DEL, C1 controls (U+009B is CSI), line and paragraph
    // separators and bidirectional overrides it writes raw, and a terminal acts on them.
    const stored = 'a\u007fb\u0085c\u009b2Jd\u2028e\u2029f\u202eg\u2066h\u001bi';
    expect(jsonText({ label: stored })).toBe('{"label":"a\\u007fb\\u0085c\\u009b2Jd\\u2028e\\u2029f\\u202eg\\u2066h\\u001bi"}');
    expect(jsonText({ n: [1, 'ok 🚀 Büro'] }, 2)).toBe(JSON.stringify({ n: [1, 'ok 🚀 Büro'] }, null, 2));
    const dir = tempDir();
    const db = path.join(dir, 'kvbench.db');
    const file = writeResults(dir, 'r1.json', kvbenchResults({ tokPerS: 100 }));
    expect((await run(() => importCommand([file, '--system', 'lab', '--drive', 'nvme', '--label', 'fw', '--db', db]))).code).toBe(0);
    const raw = openDatabase(db);
    raw.prepare('UPDATE systems SET label = ?').run(stored);
    raw.prepare('UPDATE suites SET label = ?').run(stored);
    raw.close();
    const out = path.join(dir, 'e.json');
    const outputs = {
      history: (await run(() => historyCommand(['--db', db, '--json']))).stdout,
      systems: (await run(() => historyCommand(['--db', db, '--systems', '--json']))).stdout,
      suites: (await run(() => historyCommand(['--db', db, '--suites', '--json']))).stdout,
      report: (await run(() => reportCommand(['--db', db, '--all', '--json']))).stdout,
      export: (await run(() => exportCommand(['--db', db, '--out', out]))).code === 0 ? fs.readFileSync(out, 'utf8') : 'export failed',
    };
    for (const [name, text] of Object.entries(outputs)) {
      expect(text, name).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/);
      expect(text, name).toContain('\\u202e');
    }
    expect((JSON.parse(outputs.history) as { systemLabel: string; suiteLabel: string }[])[0]).toMatchObject({ systemLabel: stored, suiteLabel: stored });
    expect((JSON.parse(outputs.systems) as { systems: { label: string }[] }).systems[0].label).toBe(stored);
    expect((JSON.parse(outputs.export) as { trials: { systemLabel: string }[] }).trials[0].systemLabel).toBe(stored);
  });
});
