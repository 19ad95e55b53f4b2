// `kvbench merge`: the results files of a multi-host run's ranks as one result.
import fs from 'node:fs';
import { isSameFile } from '../engine/config/system-directories.ts';
import { formatBytesPerSecAsGBps, formatIntegerGrouped, formatNsAsMs, formatNsAsSeconds, formatNsPerMiBAsMsPerMiB, formatRatioAsPercent } from '../engine/report/format.ts';
import { MergeError, mergeRanks, type MergedRanks } from '../export/merge-ranks.ts';
import { mergedResultsFile } from '../export/merged-results-file.ts';
import { writeFileAtomic } from '../util/write-file-atomic.ts';
import { emptyValueErrors, intFlag, parseCommandArgs } from './command-args.ts';
import { EXIT_FAILED, EXIT_OK, EXIT_PARTIAL } from './run-command.ts';
import { jsonText, printable, printableLines } from '../../src-shared/domain/label-text.ts';

export const MERGE_USAGE = `Usage: kvbench merge FILE... [--output FILE] [--world-size N]

Merges the results files of the ranks of one multi-host run (one kvbench run per host, started by
mpirun, Slurm or a Kubernetes Indexed Job against shared storage; see docs/multi-host.md).
Throughput: bytes, tokens and requests summed over the ranks within the window in which all of them
were measuring. Latency: the ranks' histograms merged (pooled percentiles), and the largest of the
ranks' own P95s. Refused: a missing or repeated rank, ranks run with different flags (also a
different --start-at, --storage-capacity-gb or --cache-dir), ranks measured by different kvbench
versions, windows that never overlap, ranks that recorded no world size unless --world-size gives it.
The merged result is measured by the ranks' kvbench version (kvbench_merge.version), which an import
stores as the trial's; the merging kvbench's is kept apart (kvbench_merge.merged_by_version).

  --output FILE   write the merged result as JSON
  --world-size N  the ranks in the run, where the ranks did not record it (a Kubernetes Indexed Job
                  run with --storage-capacity-gb and no --world-size)
  --json          print the merged result as JSON instead of the summary

Exit codes: 0 merged; 1 refused (the reasons are printed); 3 merged, but not every rank completed.
`;

export async function mergeCommand(argv: string[]): Promise<number> {
  const parsed = parseCommandArgs('merge', MERGE_USAGE, {
    args: argv,
    options: {
      output: { type: 'string' },
      'world-size': { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    allowPositionals: true,
    strict: true,
  });
  if (typeof parsed === 'number') return parsed;
  const files = parsed.positionals;
  if (files.length === 0) {
    process.stderr.write(`kvbench merge: give the ranks' results files\n\n${MERGE_USAGE}`);
    return EXIT_FAILED;
  }
  const read: { file: string; results: unknown }[] = [];
  const problems = emptyValueErrors(parsed.values, ['output']);
  if (files.some((file) => file.trim() === '')) problems.push("a rank's results file name must not be empty");
  const worldSize = intFlag('--world-size', parsed.values['world-size'], problems, { min: 1 });
  for (const file of files) {
    if (file.trim() === '') continue;
    try {
      read.push({ file, results: JSON.parse(fs.readFileSync(file, 'utf8')) });
    } catch (err) {
      problems.push(`${printable(file)} cannot be read as JSON: ${printable((err as Error).message)}`);
    }
  }
  const output = parsed.values.output;
  const inputOverwritten = output !== undefined ? files.find((f) => isSameFile(f, output)) : undefined;
  if (inputOverwritten !== undefined) problems.push(`--output names the input file ${printable(inputOverwritten)}, which the merge would overwrite`);
  // The files that were read are checked too, so that one run of the command shows every problem.
  let merged: MergedRanks | null = null;
  if (read.length > 0) {
    try {
      merged = mergeRanks(read, worldSize === undefined ? {} : { worldSize });
    } catch (err) {
      if (!(err instanceof MergeError)) throw err;
      problems.push(...err.problems);
    }
  }
  if (problems.length > 0 || merged === null) {
    process.stderr.write(`kvbench merge: refused:\n  ${problems.map(printableLines).join('\n  ')}\n`);
    return EXIT_FAILED;
  }
  const json = `${jsonText(mergedResultsFile(merged), 2)}\n`;
  if (parsed.values.output) {
    try {
      await writeFileAtomic(parsed.values.output, json);
    } catch (err) {
      process.stderr.write(`kvbench merge: could not write ${printable(parsed.values.output)}: ${printable((err as Error).message)}\n`);
      return EXIT_FAILED;
    }
    process.stderr.write(`Merged result saved to ${printable(parsed.values.output)}\n`);
  }
  process.stdout.write(parsed.values.json ? json : summaryText(merged));
  return merged.status === 'complete' ? EXIT_OK : EXIT_PARTIAL;
}

function summaryText(m: MergedRanks): string {
  const lines: string[] = [];
  const w = m.common_window;
  lines.push(`Multi-host run: ${m.ranks.length} of ${m.world_size} ranks, ${m.status.toUpperCase()} (configuration ${m.config_key})`);
  // The version an import stores as the trial's measuring one; the merging kvbench's only where it differs.
  lines.push(`Ranks measured by kvbench ${m.version}${m.merged_by_version === m.version ? '' : ` (merged by kvbench ${m.merged_by_version})`}`);
  lines.push(`Common window: ${formatNsAsSeconds(w.duration_ns)} from ${new Date(w.started_unix_ns / 1e6).toISOString()}`);
  for (const r of m.ranks) {
    lines.push(
      `  rank ${r.rank} on ${r.host}: ${r.status}, window ${formatNsAsSeconds(r.window_elapsed_ns)} (${(r.share_in_common_window * 100).toFixed(1)} % in the common window), seed ${r.seed ?? '?'}`,
    );
  }
  const rate = m.rates_per_sec;
  lines.push('All ranks together, over the common window (GB/s = 10^9 B/s):');
  lines.push(`  storage read  ${formatBytesPerSecAsGBps(rate.storage_read_bytes)}   write ${formatBytesPerSecAsGBps(rate.storage_write_bytes)}`);
  lines.push(`  CPU tier read ${formatBytesPerSecAsGBps(rate.cpu_read_bytes)}   write ${formatBytesPerSecAsGBps(rate.cpu_write_bytes)}`);
  lines.push(
    `  ${rate.generated_tokens.toFixed(1)} tokens/s, ${rate.requests_completed.toFixed(2)} requests/s ` +
      `(${formatIntegerGrouped(Math.round(m.totals.requests_completed))} requests completed in the window)`,
  );
  lines.push(...countsText(m.counts));
  lines.push('Latency (histograms of all ranks merged; "worst rank" = the largest rank P95):');
  for (const [name, l] of Object.entries(m.latency)) {
    const f = name.includes('_ns_per_mib') ? formatNsPerMiBAsMsPerMiB : formatNsAsMs;
    lines.push(`  ${name.padEnd(29)} P50 ${f(l.p50_ns)}, P95 ${f(l.p95_ns)}, P99 ${f(l.p99_ns)}, worst rank P95 ${f(l.max_rank_p95_ns)} (n=${formatIntegerGrouped(l.count)})`);
  }
  for (const n of m.notes) lines.push(`Note: ${n}`);
  return `${lines.join('\n')}\n`;
}

/** The summed counters: over each rank's whole window, unlike the rates above. */
function countsText(c: MergedRanks['counts']): string[] {
  const n = (v: number | null): string => (v === null ? '?' : formatIntegerGrouped(v));
  const rate = (v: number | null): string => (v === null ? 'unknown' : formatRatioAsPercent(v));
  const lines = [
    'All ranks together, over each rank\'s whole window (sums; rates of the sums):',
    `  requests: ${n(c.requests_issued)} issued, ${n(c.requests_completed)} completed, ${n(c.requests_failed)} failed`,
    `  cache hit rate ${rate(c.cache_hit_rate)} (${n(c.cache_hits)} hits, ${n(c.cache_misses)} misses); ` +
      `multi-turn ${rate(c.multi_turn_hit_rate)} (${n(c.multi_turn_hits)} hits, ${n(c.multi_turn_misses)} misses)`,
  ];
  for (const [tier, t] of Object.entries(c.tiers)) {
    if (!t.read_ops && !t.write_ops) continue;
    lines.push(`  ${tier} tier: ${n(t.read_ops)} reads, ${n(t.write_ops)} writes`);
  }
  return lines;
}
