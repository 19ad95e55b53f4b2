// Files people give `kvbench import` (and the app's Import) that are kvbench's own documents but no
// results file: its exports (JSON, CSV, XLSX) and its endpoint runs' files. Said for what they are,
// with what to do instead, rather than as a results file with requests_completed missing or "not
// JSON: Unexpected token". An export holds stored trials' numbers, not the raw results a trial is
// stored from (its histograms, its run options as the engine wrote them, its digest), so it is
// never imported: the database it came from still has the trials.
import { RESULTS_FILE_FORMAT as ENDPOINT_RESULTS_FORMAT } from '../endpoint/results-file.ts';

/** The results files an import takes, for "import … instead". */
const RESULTS_FILES = "the results JSON files (kvbench run --output, kvbench merge --output, or the reference benchmark's)";

/** What an import of kvbench's own exports tells the user to do; `chooseDatabase` is how they choose a database ("with --db", the app's "in Settings"). */
function exportAdvice(chooseDatabase: string): string {
  return `an export holds stored trials' numbers, not the raw results a trial is stored from: import ${RESULTS_FILES} the trials came from, or open the database the export came from ${chooseDatabase}`;
}

const ENDPOINT_ADVICE =
  'endpoint runs are stored by kvbench endpoint run into its database, not imported as trials: open that database to list, compare or export them';

/** The header of each CSV kvbench exports, by its first columns; a BOM before it or not (0.2.0 wrote none). */
const CSV_HEADERS: readonly { start: string; what: string; endpoint: boolean }[] = [
  { start: 'trial_id,suite_id,', what: "a kvbench trials export (CSV: kvbench export, or the app's Trials CSV)", endpoint: false },
  { start: 'scenario_id,scenario,system_id,', what: "a kvbench report export (CSV: kvbench export --content report, or the app's Report CSV)", endpoint: false },
  { start: 'run_id,system_label,', what: 'a kvbench endpoint export (CSV: kvbench endpoint export)', endpoint: true },
];

/**
 * Why `text`, which is not JSON, is no results file, when it is a kvbench export (CSV) or a
 * workbook (XLSX: a kvbench export or a run's --xlsx); null for anything else.
 */
export function unparsableDocumentProblem(text: string, chooseDatabase: string): string | null {
  // A ZIP's local file header, as a workbook's bytes read as UTF-8 begin.
  if (text.startsWith('PK\u0003\u0004')) {
    return (
      `a spreadsheet (XLSX, as kvbench export and kvbench run --xlsx-output write), not a results JSON file: a spreadsheet holds numbers, not the raw results a trial is stored from; import ${RESULTS_FILES}, ` +
      `or, for an export, open the database it came from ${chooseDatabase}`
    );
  }
  const firstLine = text.replace(/^\uFEFF/, '').split(/\r?\n/, 1)[0];
  const csv = CSV_HEADERS.find((h) => firstLine.startsWith(h.start));
  if (csv === undefined) return null;
  return `${csv.what}, not a results JSON file: ${csv.endpoint ? ENDPOINT_ADVICE : exportAdvice(chooseDatabase)}`;
}

/** Why `json` is no results file, when it is one of kvbench's JSON documents that are not (`format` says which); null otherwise. */
export function kvbenchDocumentProblem(json: unknown, chooseDatabase: string): string | null {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return null;
  const format = (json as { format?: unknown }).format;
  const by = (json as { kvbenchVersion?: unknown }).kvbenchVersion;
  const written = typeof by === 'string' ? ` written by kvbench ${by}` : '';
  if (format === 'kvbench-export') {
    return `a kvbench export (JSON: kvbench export, or the app's JSON export)${written}, not a results file: ${exportAdvice(chooseDatabase)}`;
  }
  if (format === 'kvbench-endpoint-export') return `a kvbench endpoint export (JSON: kvbench endpoint export)${written}, not a results file: ${ENDPOINT_ADVICE}`;
  if (format === ENDPOINT_RESULTS_FORMAT) return `a kvbench endpoint results file (kvbench endpoint run --output), not a trial's results: ${ENDPOINT_ADVICE}`;
  return null;
}
