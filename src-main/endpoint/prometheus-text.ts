// The Prometheus text exposition format (version 0.0.4) and its OpenMetrics cousin, as serving engines
// emit it on /metrics: `# HELP` / `# TYPE` lines, comments, samples `name{label="value",…} value
// [timestamp]`, label values with \\ \" \n escapes, NaN and ±Inf, OpenMetrics `# EOF` and exemplars
// (`… value # {trace_id="…"} 1`), and Prometheus 3's quoted names (`{"name.with.dots", a="b"}`).
// A line that does not parse is reported and skipped: one odd line never loses the whole page.

export interface PromSample {
  name: string;
  labels: Record<string, string>;
  value: number;
  timestampMs: number | null;
}

export interface PromPage {
  samples: PromSample[];
  /** `# TYPE` declarations: family name → counter, gauge, histogram, summary, untyped … */
  types: Map<string, string>;
  help: Map<string, string>;
  /** Lines that did not parse (1-based line numbers). */
  errors: { line: number; message: string }[];
}

const NAME_START = /[A-Za-z_:]/;
const NAME_CHAR = /[A-Za-z0-9_:]/;

function parseValue(s: string): number | null {
  switch (s) {
    case 'NaN':
      return Number.NaN;
    case '+Inf':
    case 'Inf':
    case '+inf':
    case 'inf':
      return Number.POSITIVE_INFINITY;
    case '-Inf':
    case '-inf':
      return Number.NEGATIVE_INFINITY;
  }
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s) && !/^[+-]?0[xX][0-9a-fA-F]+$/.test(s)) return null;
  const v = Number(s);
  return Number.isNaN(v) ? null : v;
}

/** Reads a double-quoted string starting at `i` (at the opening quote); returns the text and the index after it. */
function readQuoted(line: string, i: number): { text: string; next: number } {
  let out = '';
  let j = i + 1;
  while (j < line.length) {
    const c = line[j];
    if (c === '\\') {
      const n = line[j + 1];
      if (n === undefined) throw new Error('unterminated escape in a quoted string');
      out += n === 'n' ? '\n' : n; // \\ → \, \" → ", \n → newline; anything else kept as is
      j += 2;
      continue;
    }
    if (c === '"') return { text: out, next: j + 1 };
    out += c;
    j++;
  }
  throw new Error('unterminated quoted string');
}

function skipSpaces(line: string, i: number): number {
  while (i < line.length && (line[i] === ' ' || line[i] === '\t')) i++;
  return i;
}

function readName(line: string, i: number): { name: string; next: number } {
  if (!NAME_START.test(line[i] ?? '')) throw new Error(`expected a metric or label name at column ${i + 1}`);
  let j = i + 1;
  while (j < line.length && NAME_CHAR.test(line[j])) j++;
  return { name: line.slice(i, j), next: j };
}

/** One sample line → a sample (throws with a reason when it is not one). */
export function parseSampleLine(line: string): PromSample {
  let i = skipSpaces(line, 0);
  let name: string | null = null;
  if (line[i] !== '{') {
    const n = readName(line, i);
    name = n.name;
    i = n.next;
  }
  const labels: Record<string, string> = {};
  i = skipSpaces(line, i);
  if (line[i] === '{') {
    i++;
    for (;;) {
      i = skipSpaces(line, i);
      if (line[i] === '}') {
        i++;
        break;
      }
      let key: string;
      if (line[i] === '"') {
        const q = readQuoted(line, i);
        i = skipSpaces(line, q.next);
        if (line[i] !== '=') {
          // A quoted name without '=' is the metric name (Prometheus 3 UTF-8 names).
          if (name !== null) throw new Error('two metric names');
          name = q.text;
          if (line[i] === ',') i++;
          continue;
        }
        key = q.text;
      } else {
        const k = readName(line, i);
        key = k.name;
        i = skipSpaces(line, k.next);
      }
      if (line[i] !== '=') throw new Error(`expected '=' after label ${key}`);
      i = skipSpaces(line, i + 1);
      if (line[i] !== '"') throw new Error(`label ${key}: expected a quoted value`);
      const v = readQuoted(line, i);
      labels[key] = v.text;
      i = skipSpaces(line, v.next);
      if (line[i] === ',') i++;
      else if (line[i] !== '}') throw new Error(`expected ',' or '}' after label ${key}`);
    }
  }
  if (name === null) throw new Error('a sample without a metric name');
  i = skipSpaces(line, i);
  // The value, then an optional timestamp; an OpenMetrics exemplar starts with '#'.
  const hash = line.indexOf(' #', i);
  const rest = (hash >= 0 ? line.slice(i, hash) : line.slice(i)).trim().split(/[ \t]+/);
  if (rest.length === 0 || rest[0] === '') throw new Error(`${name}: no value`);
  const value = parseValue(rest[0]);
  if (value === null) throw new Error(`${name}: '${rest[0]}' is not a number`);
  let timestampMs: number | null = null;
  if (rest.length > 1) {
    const t = Number(rest[1]);
    if (!Number.isFinite(t)) throw new Error(`${name}: '${rest[1]}' is not a timestamp`);
    timestampMs = t;
  }
  if (rest.length > 2) throw new Error(`${name}: unexpected '${rest.slice(2).join(' ')}' after the value`);
  return { name, labels, value, timestampMs };
}

/** Parses a whole exposition page. */
export function parsePrometheusText(text: string): PromPage {
  const page: PromPage = { samples: [], types: new Map(), help: new Map(), errors: [] };
  const lines = text.split(/\r?\n/);
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n];
    const t = line.trim();
    if (t === '') continue;
    if (t.startsWith('#')) {
      const m = /^#\s*(HELP|TYPE)\s+(\S+)(?:\s+(.*))?$/.exec(t);
      if (m) {
        const family = m[2].startsWith('"') && m[2].endsWith('"') ? m[2].slice(1, -1) : m[2];
        if (m[1] === 'TYPE') page.types.set(family, (m[3] ?? 'untyped').trim().toLowerCase());
        else page.help.set(family, (m[3] ?? '').replace(/\\n/g, '\n').replace(/\\\\/g, '\\'));
      }
      continue; // other comments, and OpenMetrics' # EOF
    }
    try {
      page.samples.push(parseSampleLine(line));
    } catch (err) {
      page.errors.push({ line: n + 1, message: (err as Error).message });
    }
  }
  return page;
}

/** The names a family's samples may carry: `x` and `x_total` (counters are served either way). */
export function familyNames(family: string): string[] {
  return family.endsWith('_total') ? [family, family.slice(0, -'_total'.length)] : [`${family}_total`, family];
}

function labelsMatch(sample: Record<string, string>, want: Record<string, string> | undefined): boolean {
  if (!want) return true;
  for (const [k, v] of Object.entries(want)) {
    const got = sample[k];
    if (got === undefined || got.toLowerCase() !== v.toLowerCase()) return false;
  }
  return true;
}

/**
 * The samples of one family (and optional label values, compared case-insensitively): those named
 * `family_total` if any, else those named `family` — never both, so a counter is not counted twice.
 */
export function familySamples(page: PromPage, family: string, labels?: Record<string, string>): PromSample[] {
  for (const name of familyNames(family)) {
    const found = page.samples.filter((s) => s.name === name && labelsMatch(s.labels, labels));
    if (found.length > 0) return found;
  }
  return [];
}

/** Sum of a counter family's matching samples (every engine, rank and model), or null when none is served. */
export function counterValue(page: PromPage, family: string, labels?: Record<string, string>): number | null {
  const xs = familySamples(page, family, labels).filter((s) => Number.isFinite(s.value));
  return xs.length === 0 ? null : xs.reduce((a, s) => a + s.value, 0);
}

/** Mean of a gauge family's matching samples (e.g. one per engine or rank), or null when none is served. */
export function gaugeValue(page: PromPage, family: string, labels?: Record<string, string>): number | null {
  const xs = familySamples(page, family, labels).filter((s) => Number.isFinite(s.value));
  return xs.length === 0 ? null : xs.reduce((a, s) => a + s.value, 0) / xs.length;
}

/** `name{a="1",b="2"}` with labels sorted: a stable key for one series. */
export function seriesKey(s: Pick<PromSample, 'name' | 'labels'>): string {
  const keys = Object.keys(s.labels).sort();
  if (keys.length === 0) return s.name;
  return `${s.name}{${keys.map((k) => `${k}="${s.labels[k].replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`).join(',')}}`;
}
