// The plain `kvbench history` trial table as 0.7.0 printed it, kept to compare the paged one with
// (test/unit/cli/history-table-paged.test.ts): every trial of the listing read at once, then one table.
// The changes to the text since: 0.8.0's, its flag legend names the queueing-bound flag, and an e2e
// P95 measured before 0.8.0 changed its definition is marked "*" with a legend line (rev18 L6); 0.8.1's,
// the legend names the GPU tier's flag.
import { table, fmtValue } from '../../src-main/export/render-text.ts';
import { cautionsOf, ramBackingText } from '../../src-main/export/report-model.ts';
import { scenarioLabel } from '../../src-shared/domain/scenarios.ts';
import type { TrialRecord } from '../../src-shared/domain/store-types.ts';

function clip(text: string | null, chars: number): string {
  const first = (text ?? '').split('\n')[0];
  return first.length > chars ? `${first.slice(0, chars - 1)}…` : first;
}

const FLAG_LEGEND =
  '!: a trial the report flags (a RAM-backed cache directory, storage reads the page cache served, a stalled engine, a spill past the tiers the scenario names, a queueing-bound run, a GPU tier absent, smaller than asked or not pinned, an autoscaler short of its peak or target, trace-only mode: no storage I/O): kvbench report --suite N says why\n';

function ramBackingLines(trials: readonly TrialRecord[]): string {
  const byBacking = new Map<string, number[]>();
  for (const t of trials) {
    const backing = ramBackingText(t);
    if (backing === null) continue;
    let ids = byBacking.get(backing);
    if (!ids) byBacking.set(backing, (ids = []));
    ids.push(t.id);
  }
  return [...byBacking].map(([backing, ids]) => `   RAM-backed cache directory: ${backing} (trial${ids.length > 1 ? 's' : ''} ${ids.join(', ')})\n`).join('');
}

/** 0.8.0: an e2e P95 of a trial measured before 0.8.0 (all this table's trials before 0.8.0 are 0.5.0 to 0.7.0). */
const olderE2e = (t: TrialRecord): boolean => t.metrics.e2e_p95_ms !== undefined && t.measuredByVersion !== null && /^0\.[0-7]\./.test(t.measuredByVersion);
const OLDER_E2E_LEGEND =
  '*: e2e P95 measured under its definition before 0.8.0 (docs/metrics.md): not comparable with values measured by kvbench 0.8.0 or later; kvbench report aggregates it apart, marked "(definition before 0.8.0)"\n';

/** What 0.7.0's `kvbench history` printed for these trials (the listing's, in its order). */
export function historyTableBefore(trials: readonly TrialRecord[]): string {
  if (trials.length === 0) return 'no trials match\n';
  const flagged = new Set(trials.filter((t) => cautionsOf(t).length > 0));
  let out = `${table(
    ['trial', 'started', 'suite', 'label', 'system', 'drive', 'scenario', '#', 'status', '!', 'tok/s', 'stor rd', 'e2e P95 ms', 'reason'],
    trials.map((t) => [
      String(t.id),
      t.startedAt.replace('T', ' ').slice(0, 19),
      String(t.suiteId),
      clip(t.suiteLabel, 24),
      t.systemLabel,
      t.driveLabel === null ? '—' : clip(t.driveLabel, 28),
      t.scenarioId,
      String(t.trialIndex + 1),
      t.status,
      flagged.has(t) ? '!' : '',
      fmtValue(t.metrics.wall_clock_throughput_tok_per_s, 'tok/s'),
      fmtValue(t.metrics.storage_read_bytes_per_s, 'bytes/s'),
      `${fmtValue(t.metrics.e2e_p95_ms, 'ms')}${olderE2e(t) ? '*' : ''}`,
      clip(t.statusReason, 60),
    ]),
    [1, 3, 4, 5, 6, 8, 9, 13],
  )}\n`;
  if (flagged.size > 0) out += `${FLAG_LEGEND}${ramBackingLines(trials)}`;
  if (trials.some(olderE2e)) out += OLDER_E2E_LEGEND;
  const scenarios = [...new Set(trials.map((t) => t.scenarioId))];
  if (scenarios.length <= 3) out += `(${scenarios.map(scenarioLabel).join(', ')})\n`;
  return out;
}
