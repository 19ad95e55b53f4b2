import { inputError } from './input-errors.ts';
import { printable } from './text-encoding.ts';
import type { ReplayWorkload } from './replay-source.ts';
import type { SourceContext } from './source-context.ts';
import { replayTimedTrace } from './timed-trace-source.ts';
import type { TimedTraceFormat } from './timed-trace.ts';
import { csvTraceParser, tokenField } from './burstgpt-source.ts';

export const AZURE_HEADER = 'TIMESTAMP,ContextTokens,GeneratedTokens';
const REQUIRED = ['TIMESTAMP', 'ContextTokens', 'GeneratedTokens'] as const;

const DATE_TIME_RE = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:Z|([+-])(\d{2}):?(\d{2}))?$/;

/**
 * An Azure trace date-time ("2023-11-16 18:17:03.9799600", UTC, up to 9 fractional digits) as seconds
 * since the epoch, or null. Checked field by field: Date.UTC would silently roll "13-45" over. The
 * traces are UTC (no offset, "Z" or "+00:00"); a date-time with another offset ("+01:00", as a
 * conversion through local time writes) names its instant just as exactly, so it is converted to UTC.
 */
export function parseAzureTimestamp(text: string): number | null {
  const m = DATE_TIME_RE.exec(text.trim());
  if (!m) return null;
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number);
  if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || s > 60) return null;
  const daysInMonth = new Date(Date.UTC(y, mo, 0)).getUTCDate();
  if (d > daysInMonth) return null;
  const [offsetH, offsetMin] = [Number(m[9] ?? 0), Number(m[10] ?? 0)];
  if (offsetH > 23 || offsetMin > 59) return null;
  const offsetS = (m[8] === '-' ? -1 : 1) * (offsetH * 3600 + offsetMin * 60);
  const whole = Date.UTC(y, mo - 1, d, h, mi, s) / 1000 - offsetS;
  const frac = m[7] ? Number(`0.${m[7]}`) : 0;
  return whole + frac;
}

export const AZURE_FORMAT: TimedTraceFormat = {
  label: 'Azure LLM inference trace CSV',
  fileParser: (file) =>
    csvTraceParser(file, 'Azure LLM trace', AZURE_HEADER, REQUIRED, (get, line) => {
      const ts = get('TIMESTAMP');
      const t = parseAzureTimestamp(ts);
      if (t === null) throw inputError(file, line.lineNo, `TIMESTAMP "${printable(ts.slice(0, 50))}" is not a date-time like 2023-11-16 18:17:03.9799600 (UTC, or with an offset such as +01:00)`);
      return {
        t,
        contextTokens: tokenField(file, line, 'ContextTokens', get('ContextTokens')),
        generationTokens: tokenField(file, line, 'GeneratedTokens', get('GeneratedTokens')),
        hashIds: null,
      };
    }),
};

/**
 * Azure LLM inference trace replay (detected from `--dataset-path`'s header): arrival = offset from the
 * first request ÷ `--trace-speedup`; users and keys as in the BurstGPT replay.
 */
export async function createAzureSource(ctx: SourceContext, file: string): Promise<ReplayWorkload> {
  return replayTimedTrace(ctx, [file], AZURE_FORMAT, { formatName: 'azure-llm-csv', kind: 'azure', keyDigits: 6 });
}
