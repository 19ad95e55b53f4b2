/**
 * The app's words for what kvbench's messages name by the CLI's flags.
 *
 * The backend's messages (the planner's problems, a trial's stored status reason, a comparison's
 * notes) are written once, for both surfaces, in the CLI's words: `--storage-capacity-gb`,
 * `--per-config`, `kvbench report`. That text is what the CLI prints, what the database stores and
 * what the exports carry. The app shows it through `inAppWords`, which names the app's own control
 * instead: an option by the label of its field ("Storage tier capacity (GiB)", from
 * RUN_OPTION_LABELS, which the plan form's fields use too), a CLI-only flag by the control that does
 * the same (the "per config" buttons, the Drives tab). A stored note is read in the words of the
 * surface that shows it, however old; a flag the app has no control for stays as the CLI's flag.
 *
 * Pure TypeScript: no Node, no DOM.
 */
import { RUN_OPTION_LABELS, type RunOptionKey } from './run-options.ts';
import { SCENARIOS, type ScenarioId } from './scenarios.ts';
import { SHELL_QUOTED_SOURCE, shellUnquote } from './shell-quote.ts';
import { quoteLabel } from './places.ts';

/** The labels of the app's controls that do what a CLI flag (not a run option) does; the controls use them too. */
export const APP_CONTROL_LABELS = Object.freeze({
  trials: 'Trials per scenario',
  probe: 'Probe the drive and memory copy first',
  /**
   * The suite's --max-requests. Not a rule below: a message naming --max-requests is also about a
   * single run's option (an imported run's status reason), which the run option's label names.
   */
  maxRequests: 'End each trial after N requests (the duration is then a cap)',
  scenarios: 'Scenarios',
  perConfig: 'per config',
  drives: 'Drives',
  suiteLabels: 'Suite labels',
  suiteLabel: 'Suite label',
  match: 'Match trials by',
  matchScenario: 'same scenario (different RAM)',
  includeIncomplete: 'Count partial trials too',
  excludeFlagged: 'Leave flagged trials out',
  runFlags: 'Run flags',
  statedRead: 'Drive datasheet read, GB/s',
  statedWrite: 'Drive datasheet write, GB/s',
});

const L = APP_CONTROL_LABELS;

/** Not inside a word or a path ("/mnt/a--b"), and the whole flag ("--drives" is not "--drives-x"). */
const FLAG = (flag: string, then = ''): RegExp => new RegExp(`(?<![\\w/.-])${flag}${then}(?![\\w-])`, 'g');

/** Two labels of the verdict command as shellQuote writes them, or in double quotes (notes of kvbench 0.6.0 before they were quoted). */
const LABELS_COMPARE = new RegExp(`(?<![\\w/.-])kvbench report --compare (?:"([^"]*)" "([^"]*)"|(${SHELL_QUOTED_SOURCE}) (${SHELL_QUOTED_SOURCE})) --labels(?![\\w-])`, 'g');
const labelsCompareWords = (_: string, a1: string | undefined, b1: string | undefined, a2: string | undefined, b2: string | undefined): string =>
  `the ${L.suiteLabels} tab, A ${quoteLabel(a1 ?? shellUnquote(a2!))} and B ${quoteLabel(b1 ?? shellUnquote(b2!))}`;

/** Phrases first (a command with its flag, a flag with its value), then flags alone. */
const RULES: readonly (readonly [RegExp, string | ((match: string, ...groups: (string | undefined)[]) => string)])[] = [
  [FLAG('kvbench hw --probe'), `the drive probe (${quoteLabel(L.probe)} in New suite)`],
  [FLAG('kvbench report --stated-read-gbps'), quoteLabel(L.statedRead)],
  [FLAG('kvbench report --stated-write-gbps'), quoteLabel(L.statedWrite)],
  // Where A and B stand for any two labels ("… --labels gives a verdict"), not two labels named so.
  [FLAG('kvbench report --compare A B --labels', '(?= gives)'), `the ${L.suiteLabels} tab`],
  [LABELS_COMPARE, labelsCompareWords],
  [FLAG('kvbench report'), 'the report'],
  [FLAG('--profile', ' mlperf'), 'the MLPerf profile'],
  [FLAG('--match', ' scenario'), `${quoteLabel(L.match)}: ${L.matchScenario}`],
  [FLAG('--resume', ' \\d+'), 'Resume (History → Suites)'],
  [FLAG('--no-probe'), `unticking ${quoteLabel(L.probe)}`],
  [FLAG('--trials'), quoteLabel(L.trials)],
  [FLAG('--scenarios'), `the ${L.scenarios} ticks`],
  [FLAG('--per-config'), `the ${quoteLabel(L.perConfig)} buttons`],
  [FLAG('--drives'), `the ${L.drives} tab`],
  [FLAG('--labels'), `the ${L.suiteLabels} tab`],
  [FLAG('--run-flags'), quoteLabel(L.runFlags)],
  [FLAG('--include-incomplete'), quoteLabel(L.includeIncomplete)],
  [FLAG('--exclude-flagged'), quoteLabel(L.excludeFlagged)],
  [FLAG('--stated-read-gbps'), quoteLabel(L.statedRead)],
  [FLAG('--stated-write-gbps'), quoteLabel(L.statedWrite)],
];

/** Whether `text`, a message in the CLI's words, names `flag` (a whole flag: not inside a path, not the start of a longer flag). */
export function namesFlag(text: string, flag: string): boolean {
  return FLAG(flag).test(text);
}

/** `--storage-capacity-gb` → `storageCapacityGb`: run options are keyed by their flag's camelCase. */
const optionKeyOf = (flag: string): string => flag.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/** `text`, a message of the backend in the CLI's words, in the app's words. */
export function inAppWords(text: string): string {
  let out = text;
  for (const [re, words] of RULES) out = typeof words === 'string' ? out.replace(re, words) : out.replace(re, words);
  return out.replace(/(?<![\w/.-])--([a-z][a-z0-9-]*)(?![\w-])/g, (flag, name: string) => {
    const key = optionKeyOf(name);
    return Object.hasOwn(RUN_OPTION_LABELS, key) ? quoteLabel(RUN_OPTION_LABELS[key as RunOptionKey]) : flag;
  });
}

/** Scenario ids, longest first ("gpu-cpu-storage" before "gpu-cpu"), as whole tokens (not in a path, not part of a longer id). */
const SCENARIO_IDS = new RegExp(
  `(?<![\\w/.-])(${(Object.keys(SCENARIOS) as ScenarioId[]).sort((a, b) => b.length - a.length).join('|')})(?![\\w/-])`,
  'g',
);

/** `text` with the scenarios it names by their CLI ids ("cpu-only") named as the app's Scenarios list names them ("CPU only"). */
export function scenarioLabelsIn(text: string): string {
  return text.replace(SCENARIO_IDS, (id) => SCENARIOS[id as ScenarioId].label);
}

/** A message the CLI prints as a clause ("the cache directory cannot …"), as a sentence: a capital first letter and a full stop. */
export function asSentence(text: string): string {
  const t = text.trim();
  if (t === '') return t;
  return `${t[0]!.toUpperCase()}${t.slice(1)}${/[.!?…]$/.test(t) ? '' : '.'}`;
}

/**
 * A problem or a note of the plan as the Plan step shows it: the app's field names and scenario
 * labels, as a sentence. The CLI prints the same lines with its flags and scenario ids.
 */
export function planMessageInAppWords(text: string): string {
  return asSentence(inAppWords(scenarioLabelsIn(text)));
}
