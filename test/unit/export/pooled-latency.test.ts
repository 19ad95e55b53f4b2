// Pooled latencies read each stored histogram once, only its counts present (LatencyHistogram.
// mergeEncoded), where 0.7.0 decoded it twice plus a copy, and the scale review's version once into a
// full counts array: every number a report gives must stay what the old ways gave. The old ways are
// kept (test/support/pooled-before.ts, pooled-library.ts); this compares them on a real SQLite file
// whose trials stored histograms of every shape a database can hold, a lab's and damaged ones included.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as hdr from 'hdr-histogram-js';
import { afterAll, describe, expect, it } from 'vitest';
import { LatencyHistogram } from '../../../src-main/engine/metrics/latency-histogram.ts';
import { Rng } from '../../../src-main/engine/workload/rng.ts';
import { POOLED_HISTOGRAMS, buildScenarioReport, pooledLatencies } from '../../../src-main/export/scenario-report.ts';
import { openStore } from '../../../src-main/store/open-store.ts';
import type { TrialHistogram } from '../../../src-shared/domain/store-types.ts';
import { pooledBefore } from '../../support/pooled-before.ts';
import { pooledByLibrary } from '../../support/pooled-library.ts';
import { fakeHardware, kvbenchResults } from '../store/fixtures.ts';
import { addSuiteTrials } from '../store/seed-store.ts';

const KINDS = ['spread', 'small', 'zeros', 'zeros-and-values', 'one-value', 'wider-range', 'other-resolution', 'damaged', 'no-count', 'top-heavy', 'lab'] as const;
/** The histograms a lab's database stores (the scale review's 5,000-trial one), as stored. */
const LAB: TrialHistogram[] = JSON.parse(fs.readFileSync(path.resolve(import.meta.dirname, '../../fixtures/stored-histograms.json'), 'utf8')).histograms.map(
  (h: { name: string; count: number; sumNs: number; hdr: string }): TrialHistogram => ({ name: h.name, unit: 'ns', count: h.count, sumNs: h.sumNs, hdr: h.hdr }),
);
type Kind = (typeof KINDS)[number];

/** A stored histogram of `kind` (its count and sum as the store keeps them), values from `rng`. */
function histogramOf(kind: Kind, name: string, rng: Rng): TrialHistogram {
  const logUniform = (lo: number, hi: number): number => Math.round(Math.exp(Math.log(lo) + rng.next() * (Math.log(hi) - Math.log(lo))));
  const h = new LatencyHistogram();
  const n = 1 + Math.floor(rng.next() * 300);
  const stored = (hdrText: string, count = h.count, sumNs = h.sumNs): TrialHistogram => ({ name, unit: 'ns', count, sumNs, hdr: hdrText });
  switch (kind) {
    case 'spread':
      for (let i = 0; i < n; i++) h.record(logUniform(1e4, 5e9));
      return stored(h.encode());
    case 'small': // bucket 0 only: a histogram that never grew
      for (let i = 0; i < n; i++) h.record(Math.floor(rng.next() * 2047));
      return stored(h.encode());
    case 'zeros': // trace-only mode's storage latencies
      for (let i = 0; i < n; i++) h.record(0);
      return stored(h.encode());
    case 'zeros-and-values':
      for (let i = 0; i < n; i++) h.record(rng.next() < 0.4 ? 0 : logUniform(1e3, 1e8));
      return stored(h.encode());
    case 'one-value': // its P99 lies in its top bucket, where the bound of the maximum decides
      h.record(logUniform(1e5, 1e10));
      return stored(h.encode());
    case 'wider-range': {
      // Grown for a large value, then reset and refilled with small ones: its range is wider than its
      // values need, and decode()'s copy takes it at each bucket's lowest value.
      h.record(logUniform(1e9, 1e11));
      h.reset();
      for (let i = rng.next() < 0.3 ? n - 1 : 0; i < n; i++) h.record(logUniform(1e4, 1e7));
      return stored(h.encode());
    }
    case 'other-resolution': {
      const other = hdr.build({ bitBucketSize: 64, autoResize: true, lowestDiscernibleValue: 1000, highestTrackableValue: 2000, numberOfSignificantValueDigits: 2, useWebAssembly: false });
      let sumNs = 0;
      for (let i = rng.next() < 0.3 ? n - 1 : 0; i < n; i++) {
        const v = logUniform(1e4, 1e9);
        other.recordValue(v);
        sumNs += v;
      }
      return stored(hdr.encodeIntoCompressedBase64(other), other.totalCount, sumNs);
    }
    case 'damaged': {
      for (let i = 0; i < n; i++) h.record(logUniform(1e4, 1e9));
      const good = h.encode();
      const way = Math.floor(rng.next() * 3);
      return stored(way === 0 ? 'abc' : way === 1 ? good.slice(0, Math.floor(good.length / 2)) : Buffer.from('not a histogram at all').toString('base64'));
    }
    case 'no-count': // a row whose count says nothing was recorded: never pooled
      return stored(h.encode(), 0, 0);
    case 'lab': {
      // One the lab stored under this name where it stored one, else any of its.
      const same = LAB.filter((l) => l.name === name);
      const l = (same.length > 0 ? same : LAB)[Math.floor(rng.next() * (same.length > 0 ? same.length : LAB.length))]!;
      return { ...l, name };
    }
    case 'top-heavy':
      for (let i = 0; i < n; i++) h.record(rng.next() < 0.9 ? 3_000_000_017 : logUniform(1e4, 1e6));
      return stored(h.encode());
  }
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvb-pooled-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('pooled latencies', () => {
  it('are what the old way (a checking decode, a copy, a merge) gave, to the last number, on a real database', () => {
    const file = path.join(dir, 'kvbench.db');
    const s = openStore(file);
    const rng = new Rng(20261125);
    const results = kvbenchResults({ tokPerS: 1000 }) as unknown as Record<string, unknown>;
    // Twelve groups (one system each) of 1 to 60 trials; a group's kinds lean one way or mix all.
    for (let g = 0; g < 12; g++) {
      const hw = fakeHardware({ systemId: `sys-pool${String(g).padStart(12, '0')}`, hostname: `lab${g}` });
      addSuiteTrials(s, hw, g === 0 ? 1 : g < 3 ? 2 : 1 + Math.floor(rng.next() * 60), () => ({ results }));
    }
    const trials = s.listTrials({ order: 'asc' });
    const drop = s.db.prepare('DELETE FROM trial_histograms WHERE trial_id = ?');
    const put = s.db.prepare('INSERT INTO trial_histograms (trial_id, name, unit, count, sum_ns, hdr) VALUES (?, ?, ?, ?, ?, ?)');
    s.atomically(() => {
      for (const t of trials) {
        drop.run(t.id);
        // The one trial of group 0 stored only damaged histograms (its pooled latencies are all
        // unread); groups 1 and 2 only the shapes decode() copied at each bucket's lowest value (where
        // their pooled maximum, and so a percentile in the top bucket, would show a merge that skipped
        // the copy); the others lean to one shape and mix the rest.
        const g = Number(t.systemId.slice(-12));
        const only: Kind | null = g === 0 ? 'damaged' : g === 1 ? 'wider-range' : g === 2 ? 'other-resolution' : null;
        for (const name of [...POOLED_HISTOGRAMS, 'queue_wait']) {
          const kind = only ?? (rng.next() < 0.5 ? KINDS[g % KINDS.length] : KINDS[Math.floor(rng.next() * KINDS.length)]);
          const h = histogramOf(kind, name, rng);
          put.run(t.id, h.name, h.unit, h.count, h.sumNs, h.hdr);
        }
      }
    });
    s.close();

    const r = openStore(file, { readonly: true });
    const read = r.listTrials({ order: 'asc' });
    const stored = new Map(read.map((t) => [t.id, r.trialHistograms(t.id)]));
    r.close();
    const report = buildScenarioReport(read, { histogramsOf: (id) => stored.get(id)! });
    expect(report.scenarios).toHaveLength(12);
    let pooledNumbers = 0;
    for (const sc of report.scenarios) {
      const hs = sc.trialIds.flatMap((id) => stored.get(id)!);
      const before = POOLED_HISTOGRAMS.map((n) => pooledBefore(n, hs)).filter((p) => p !== null);
      // Every trial here was measured by this kvbench: each pool is of the current definition.
      const current = before.map((p) => ({ ...p, olderDefinition: null }));
      expect(sc.pooled).toStrictEqual(current);
      expect(pooledLatencies(POOLED_HISTOGRAMS, hs)).toStrictEqual(current);
      expect(pooledByLibrary(POOLED_HISTOGRAMS, hs)).toStrictEqual(before);
      pooledNumbers += before.length;
    }
    expect(pooledNumbers).toBeGreaterThan(50);

    // The database held every shape: damaged rows, and decodable ones of both ways of merging.
    const all = [...stored.values()].flat().filter((h) => h.count > 0 && POOLED_HISTOGRAMS.includes(h.name));
    const decoded = all.flatMap((h) => (LatencyHistogram.decodeProblem(h.hdr) === null ? [hdr.decodeFromCompressedBase64(h.hdr, 64, false) as hdr.JsHistogram] : []));
    const asStored = decoded.filter((d) => d.lowestDiscernibleValue === 1 && d.bucketCount === d.getBucketsNeededToCoverValue(d.maxValue));
    expect(all.length - decoded.length).toBeGreaterThan(10);
    expect(asStored.length).toBeGreaterThan(100);
    expect(decoded.filter((d) => d.lowestDiscernibleValue !== 1).length).toBeGreaterThan(10);
    expect(decoded.filter((d) => d.lowestDiscernibleValue === 1 && !asStored.includes(d)).length).toBeGreaterThan(10);
    expect(report.scenarios.some((sc) => sc.pooled.some((p) => p.damagedTrials > 0 && p.count > 0))).toBe(true);
    expect(report.scenarios.some((sc) => sc.pooled.some((p) => p.damagedTrials > 0 && p.count === 0))).toBe(true);
  });

  it('says why a stored histogram does not decode, and merges nothing of it', () => {
    const h = new LatencyHistogram();
    h.record(5e6);
    const merged = new LatencyHistogram();
    expect(merged.mergeEncoded('abc', 123)).toMatch(/./);
    expect([merged.count, merged.sumNs]).toEqual([0, 0]);
    expect(merged.mergeEncoded(h.encode(), h.sumNs)).toBeNull();
    expect(merged.summary()).toStrictEqual(LatencyHistogram.decode(h.encode(), h.sumNs).summary());
  });
});
