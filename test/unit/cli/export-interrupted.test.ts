// `kvbench export` stopped by Ctrl-C, SIGTERM or SIGHUP while it writes: it installed no handling, so
// the signal ended the process before anything removed its hidden temporary beside the target (a
// whole export's size on a large database), and it said nothing. It now removes the temporary, says
// it was interrupted and that nothing was written, and exits 128 + the signal. Partial files a
// SIGKILLed export left are removed (or named, while young) by the next export of the same file.
// The signal is delivered at a known point (the first page of trials read, the temporary open), not
// raced against the write.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { exportCommand } from '../../../src-main/cli/export-command.ts';
import { openStore } from '../../../src-main/store/open-store.ts';
import { Store } from '../../../src-main/store/store.ts';
import { STALE_TEMPORARY_MS } from '../../../src-main/util/write-file-atomic.ts';
import { removeTempDirs, tempDir } from '../store/fixtures.ts';
import { seedVariedHistory } from '../store/seed-store.ts';
import { runInProcess } from './in-process.ts';
import { printable } from '../../../src-shared/domain/label-text.ts';

/** A file name with a screen-clearing ESC sequence: every line names it escaped, never raw. */
const HOSTILE = 'out\u001b[2J';

afterEach(() => {
  vi.restoreAllMocks();
  removeTempDirs();
});

function seeded(): { dir: string; db: string } {
  const dir = tempDir('kvb-export-stop-');
  const db = path.join(dir, 'kvbench.db');
  const s = openStore(db);
  seedVariedHistory(s, 30);
  s.close();
  return { dir, db };
}

class Exited extends Error {}

describe('kvbench export interrupted', () => {
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    it(`${signal} while the file is written: the temporary is removed, the old file kept, "interrupted" said, exit ${signal === 'SIGINT' ? 130 : signal === 'SIGTERM' ? 143 : 129}`, async () => {
      const { dir, db } = seeded();
      const out = path.join(dir, `${HOSTILE}.csv`);
      fs.writeFileSync(out, 'OLD');
      const original = Store.prototype.trialPages;
      // The first page of trials is read once the temporary is open: the signal comes then.
      vi.spyOn(Store.prototype, 'trialPages').mockImplementation(function* (this: Store, ...args: Parameters<Store['trialPages']>) {
        const pages = original.apply(this, args);
        let first = true;
        for (const page of pages) {
          if (first) {
            first = false;
            expect(fs.readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toHaveLength(1);
            process.emit(signal, signal);
          }
          yield page;
        }
      });
      // The process would end at its exit: what is on the disk then is what the user finds.
      let atExit: { code: number | undefined; files: string[] } | null = null;
      vi.spyOn(process, 'exit').mockImplementation((code?: string | number | null) => {
        atExit = { code: Number(code), files: fs.readdirSync(dir).sort() };
        throw new Exited();
      });
      const r = await runInProcess(() => exportCommand(['--db', db, '--format', 'csv', '--out', out]).catch(() => -1));
      expect(atExit).toMatchObject({ code: signal === 'SIGINT' ? 130 : signal === 'SIGTERM' ? 143 : 129 });
      expect(atExit!.files.filter((f) => !f.startsWith('kvbench.db'))).toEqual([`${HOSTILE}.csv`]);
      expect(r.stderr).toContain(`kvbench export: interrupted (${signal}): nothing was written to ${printable(out)} (the file there is as it was)`);
      expect(r.stderr).not.toContain('\u001b');
      expect(fs.readFileSync(out, 'utf8')).toBe('OLD');
    });
  }

  it('a partial file a SIGKILLed export left: removed by the next export of the same file once stale, named while young', async () => {
    const { dir, db } = seeded();
    const out = path.join(dir, `${HOSTILE}.json`);
    const deadPid = spawnSync('true').pid!;
    const stale = path.join(dir, `.${HOSTILE}.json.${deadPid}.0123456789ab.tmp`);
    const young = path.join(dir, `.${HOSTILE}.json.${deadPid}.ba9876543210.tmp`);
    fs.writeFileSync(stale, '{"partial');
    fs.writeFileSync(young, '{"partial');
    const old = new Date(Date.now() - STALE_TEMPORARY_MS - 60_000);
    fs.utimesSync(stale, old, old);
    const other = path.join(dir, `.other.json.${deadPid}.0123456789ab.tmp`);
    fs.writeFileSync(other, '');
    fs.utimesSync(other, old, old);
    const r = await runInProcess(() => exportCommand(['--db', db, '--out', out]));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`kvbench export: removed ${printable(stale)}, a partial file an interrupted export of ${printable(out)} left`);
    expect(r.stderr).toContain(`kvbench export: ${printable(young)} is a partial file an interrupted export of ${printable(out)} left (its process no longer runs): remove it`);
    expect(r.stderr).not.toContain('\u001b');
    expect(fs.existsSync(stale)).toBe(false);
    expect(fs.existsSync(young)).toBe(true);
    expect(fs.existsSync(other)).toBe(true); // another file's
  });
});
