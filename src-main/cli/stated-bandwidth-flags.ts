// `--stated-read-gbps` / `--stated-write-gbps`: a drive's datasheet bandwidth, for the commands that
// build a tier comparison (report, export), so both measure efficiency against the same figure.
// Decimal GB/s because datasheets state it so, although the results' `*_gbps` keys are GiB/s (the
// reference's): the usage says so, so that a results value copied in is not 7 % off unnoticed.
import type { StatedBandwidth } from '../export/report-model.ts';
import { numberFlag } from './command-args.ts';

export const STATED_BANDWIDTH_OPTIONS = {
  'stated-read-gbps': { type: 'string' },
  'stated-write-gbps': { type: 'string' },
} as const;

/** The flags' usage lines, their descriptions starting at `column` as in the command's own usage. */
export function statedBandwidthUsage(column: number): string {
  const line = (flag: string, text: string): string => `  ${flag.padEnd(column - 3)} ${text}\n`;
  return (
    line('--stated-read-gbps X', "the drive's read bandwidth as its datasheet states it, in GB/s = 10^9 B/s") +
    line('', "(not GiB/s, the unit of the results' *_gbps keys): storage read efficiency") +
    line('', 'against it instead of the probed limit') +
    line('--stated-write-gbps X', 'the same for writes')
  );
}

/** The flags as bytes/s (null when neither is given), or the problem with them. */
export function statedBandwidthFromFlags(read: string | undefined, write: string | undefined): StatedBandwidth | null | string {
  const problems: string[] = [];
  const bytesPerS = (flag: string, v: string | undefined): number | null => {
    const n = numberFlag(flag, v, problems, { above: 0, what: 'a positive number of GB/s (10^9 bytes/s)' });
    return n === undefined ? null : n * 1e9;
  };
  const s = { readBytesPerS: bytesPerS('--stated-read-gbps', read), writeBytesPerS: bytesPerS('--stated-write-gbps', write) };
  if (problems.length > 0) return problems.join('; ');
  return s.readBytesPerS === null && s.writeBytesPerS === null ? null : s;
}
