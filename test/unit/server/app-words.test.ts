// The backend's messages, written once in the CLI's words, as the app shows them: each flag named
// by the app's own control. The messages come from the code that writes them (the planner, the
// storage tier, a comparison of a real database); a stored trial note is read as stored.
import { afterEach, describe, expect, it } from 'vitest';
import { prepareStorageTarget } from '../../../src-main/engine/tiers/storage-target.ts';
import { buildSystemComparison } from '../../../src-main/export/report-model.ts';
import { resolveSelection } from '../../../src-main/export/selection.ts';
import { openStore } from '../../../src-main/store/open-store.ts';
import { planOptionErrors, planSuite } from '../../../src-main/suite/planner.ts';
import { APP_CONTROL_LABELS, inAppWords } from '../../../src-shared/domain/app-words.ts';
import { labelGroupsText, labelsApartText, labelsVerdictText, suiteLabelText } from '../../../src-shared/domain/places.ts';
import { RUN_OPTION_LABELS } from '../../../src-shared/domain/run-options.ts';
import { dbIn, importDrive } from '../export/drive-imports.ts';
import { fakeHardware, removeTempDirs, tempDir } from '../store/fixtures.ts';

afterEach(removeTempDirs);

/** A CLI flag or command left in text the app shows. */
const CLI_WORDS = /(?<![\w/.-])--[a-z]|\bkvbench [a-z]/;

describe("the backend's messages in the app's words", () => {
  it("the planner's refusal and notes name the plan form's fields, by the labels the fields have", () => {
    const tiny = planSuite(fakeHardware({ freeGiB: 20 / 1024 }), { profile: 'smoke', cacheDir: '/mnt/x/kv', probeRun: { durationS: 2, sizeBytes: null } });
    const refusal = tiny.estimate.problems.join('\n');
    expect(refusal).toMatch(/choose another --cache-dir, or set a smaller --storage-capacity-gb$/); // the CLI's words, as stored and printed
    expect(inAppWords(refusal)).toMatch(/choose another “Cache directory”, or set a smaller “Storage tier capacity \(GiB\)”$/);
    expect(RUN_OPTION_LABELS.cacheDir).toBe('Cache directory');
    expect(RUN_OPTION_LABELS.storageCapacityGb).toBe('Storage tier capacity (GiB)');
    const probeNote = tiny.notes.find((n) => n.includes('--no-probe'))!;
    expect(inAppWords(probeNote)).toMatch(/\(unticking “Probe the drive and memory copy first” skips it\)$/);
    const mlperf = planSuite(fakeHardware({ freeGiB: 500 }), { profile: 'quick', cacheDir: '/mnt/kv', extras: true });
    const reference = [...mlperf.notes, ...mlperf.runs.flatMap((r) => r.derivation)].filter((n) => n.includes('--profile mlperf'));
    expect(reference.length).toBeGreaterThan(0);
    for (const n of reference) expect(inAppWords(n)).toContain('the MLPerf profile');

    const errors = planOptionErrors({ profile: 'smoke', cacheDir: '/mnt/kv', trials: 0, durationS: 0.5, warmUpS: -1, storageCapacityGb: -2 });
    expect(errors.map(inAppWords)).toEqual([
      '“Trials per scenario” must be an integer from 1 to 100, got 0',
      '“Seconds per trial” must be a positive integer (seconds), got 0.5',
      '“Warm-up seconds” must be an integer from 0 to 3600 (seconds), got -1',
      '“Storage tier capacity (GiB)” must be a number of GiB ≥ 0 (0 = 95 % of the free space), got -2',
    ]);
    for (const text of [refusal, ...tiny.notes, ...mlperf.notes, ...errors]) expect(inAppWords(text)).not.toMatch(CLI_WORDS);
  });

  it("a trial's stored note names the field to change, also one stored by an older kvbench", async () => {
    const dir = tempDir();
    const refused = await prepareStorageTarget({ cacheDir: dir, storageCapacityGb: 1e6, largestEntryBytes: 1024 }).then(
      () => null,
      (err: Error) => `INSUFFICIENT_SPACE: ${err.message}`, // as the runner stores it
    );
    expect(refused).toMatch(/^INSUFFICIENT_SPACE: --storage-capacity-gb 1000000 \(/);
    expect(inAppWords(refused!)).toMatch(/^INSUFFICIENT_SPACE: “Storage tier capacity \(GiB\)” 1000000 \(.* exceeds the free space on /);
    expect(inAppWords('no request completed in the 3.0 s measured window (8 in flight, 56 queued when it closed): lengthen --duration or lower the load')).toBe(
      'no request completed in the 3.0 s measured window (8 in flight, 56 queued when it closed): lengthen “Seconds per trial” or lower the load',
    );
    expect(inAppWords('the storage tier on /mnt/x/kv can hold 0.01 GiB but this workload\'s largest KV entry is 0.02 GiB: free up space, choose another --cache-dir, or a smaller model or --storage-capacity-gb')).toBe(
      "the storage tier on /mnt/x/kv can hold 0.01 GiB but this workload's largest KV entry is 0.02 GiB: free up space, choose another “Cache directory”, or a smaller model or “Storage tier capacity (GiB)”",
    );
    expect(inAppWords('… could not store it; the suite stops here; resume it with --resume 12 once the database can be written.')).toBe(
      '… could not store it; the suite stops here; resume it with Resume (History → Suites) once the database can be written.',
    );
  });

  it("a comparison's notes name Compare's controls: the per config buttons, the Drives tab, Match trials by", async () => {
    const dir = tempDir();
    const store = openStore(dbIn(dir));
    try {
      await importDrive(store, dir, 'A-ram', [{ tokPerS: 100, ramBacked: true, ramBacking: 'tmpfs' }, { tokPerS: 101, ramBacked: true, ramBacking: 'tmpfs' }]);
      await importDrive(store, dir, 'B-disk', [{ tokPerS: 90 }, { tokPerS: 91 }]);
      const side = (ref: string) => {
        const d = store.resolveDrive(ref);
        return { label: d.label, id: d.id, trials: store.listTrials(resolveSelection(store, { drives: [d.id] })) };
      };
      const notes = buildSystemComparison(side('A-ram'), side('B-disk'), { kind: 'drive' }).notes;
      const perConfig = notes.find((n) => n.includes('--per-config'))!;
      expect(inAppWords(perConfig)).toMatch(/; per configuration, see the “per config” buttons\)$/);
      for (const n of notes) expect(inAppWords(n)).not.toMatch(CLI_WORDS);
    } finally {
      store.close();
    }
    expect(APP_CONTROL_LABELS.perConfig).toBe('per config');
    expect(inAppWords('so those configurations count once per drive in the ratios and win rates (see --per-config; compare drives directly with --drives)')).toBe(
      'so those configurations count once per drive in the ratios and win rates (see the “per config” buttons; compare drives directly with the Drives tab)',
    );
    expect(inAppWords('B (vm): 1 of its 13 matched trial(s) carry another caution (kvbench report lists it per trial)')).toBe('B (vm): 1 of its 13 matched trial(s) carry another caution (the report lists it per trial)');
    expect(inAppWords('no configuration has complete trials on both sides (try --match scenario)')).toBe('no configuration has complete trials on both sides (try “Match trials by”: same scenario (different RAM))');
  });

  it('names the two labels of the verdict command however they are quoted, also labels with quotes, $ or a newline', () => {
    for (const [a, b] of [
      ['fw "2.1" $HOME', 'fw 2.2'],
      ["it's `date`", 'two\nlines'],
      ['fw2.1', 'fw2.2'],
      ['A', 'B'],
    ]) {
      const note = `B (nvme1): its matched trials come from suites of 2 suite labels, counted together as one side; ${labelsVerdictText([{ label: a }, { label: b }])}`;
      expect(inAppWords(note)).toBe(`B (nvme1): its matched trials come from suites of 2 suite labels, counted together as one side; for a verdict between two labels: the Suite labels tab, A “${a}” and B “${b}”`);
    }
    expect(inAppWords('kvbench report --compare A B --labels gives a verdict between two labels')).toBe('the Suite labels tab gives a verdict between two labels');
    // A note stored before the labels were shell-quoted reads the same.
    expect(inAppWords('for a verdict between two labels: kvbench report --compare "fw 2.1" "fw 2.2" --labels')).toBe('for a verdict between two labels: the Suite labels tab, A “fw 2.1” and B “fw 2.2”');
  });

  it('quotes a user\'s label one way in all prose, curly, so a label with straight quotes reads unambiguously (rev10 D6)', () => {
    const y = 'lab "Y" $HOME';
    const groups = [{ label: y, suiteIds: [5] }, { label: 'lab X', suiteIds: [4] }];
    expect(suiteLabelText(y)).toBe('label “lab "Y" $HOME”');
    expect(labelGroupsText([...groups, { label: null, suiteIds: [6, 7] }])).toBe('“lab "Y" $HOME”: suite 5; “lab X”: suite 4; none: suites 6, 7');
    expect(labelsApartText(groups)).toContain('(“lab "Y" $HOME”: suite 5; “lab X”: suite 4)');
    // The Compare note: the label groups and the verdict's two labels quoted alike; the CLI's command keeps its shell quoting.
    const note = `A (nvme0): its matched trials come from suites of 2 suite labels (${labelGroupsText(groups)}), counted together as one side; ${labelsVerdictText(groups)}`;
    expect(note).toContain(`kvbench report --compare 'lab "Y" $HOME' 'lab X' --labels`);
    expect(inAppWords(note)).toBe(
      'A (nvme0): its matched trials come from suites of 2 suite labels (“lab "Y" $HOME”: suite 5; “lab X”: suite 4), counted together as one side; for a verdict between two labels: the Suite labels tab, A “lab "Y" $HOME” and B “lab X”',
    );
  });

  it('leaves what is no flag alone, and a flag the app has no control for as the CLI names it', () => {
    expect(inAppWords('disk full (ENOSPC) on /mnt/a--b/kv-cache')).toBe('disk full (ENOSPC) on /mnt/a--b/kv-cache');
    expect(inAppWords('see --frobnicate, and --drives-x')).toBe('see --frobnicate, and --drives-x');
    expect(inAppWords('--cpu-mem-gb 0 disables the CPU tier')).toBe('“CPU tier (GiB)” 0 disables the CPU tier');
  });
});
