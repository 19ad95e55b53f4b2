/**
 * The "place" of a measurement: the system it ran on and the drive (null: unknown). Aggregates never
 * mix places, and every output (terminal, exports, the app's report) names a group's place the same way.
 *
 * Pure TypeScript: no Node, no DOM.
 */
import { shellQuote } from './shell-quote.ts';

/** What a summary's trials share besides the configuration: the system and the drive (null: unknown). */
export const placeKey = (x: { systemId: string; driveId: string | null }): string => `${x.systemId}\u0000${x.driveId ?? ''}`;

/** More than one system or drive among the items: outputs then name each group's. */
export function spansSeveralPlaces(items: readonly { systemId: string; driveId: string | null }[]): boolean {
  return new Set(items.map(placeKey)).size > 1;
}

/** "lab1" or "lab1 · Samsung 990 PRO" — how a group's system and drive are shown. */
export function placeLabel(x: { systemLabel: string; driveLabel: string | null }): string {
  return x.driveLabel ? `${x.systemLabel} · ${x.driveLabel}` : x.systemLabel;
}

/**
 * The suite label a group's trials share (null: their suites carry none, which is a value of its own).
 * Suites with one label pool, as a system's suites do; trials of two labels (two firmware builds of
 * one drive, say) are never one aggregate, as two drives' are not.
 */
export const suiteLabelKey = (x: { suiteLabel: string | null }): string => (x.suiteLabel === null ? '\u0000' : x.suiteLabel);

/** A report group's key: scenario, configuration, system and drive, suite label (the report's rows, and their keys on screen). */
export function reportGroupKey(x: { scenarioId: string; systemId: string; driveId: string | null; suiteLabel: string | null }, config: string): string {
  return `${x.scenarioId}\u0000${config}\u0000${placeKey(x)}\u0000${suiteLabelKey(x)}`;
}

/** More than one suite label among the items (unlabelled counting as one): outputs then name each group's. */
export function spansSeveralLabels(items: readonly { suiteLabel: string | null }[]): boolean {
  return new Set(items.map(suiteLabelKey)).size > 1;
}

/**
 * A user's suite label inside prose: in curly quotes, “fw 2.1”, as the app quotes its own control
 * names. A label is any text, and straight double quotes inside it ('lab "Y"') would read as the
 * quoting's end. The one rule every output quotes a label by; a command to paste into a shell quotes
 * it with shellQuote instead.
 */
export const quoteLabel = (label: string): string => `“${label}”`;

/** 'label “fw 2.1”' or 'no suite label' — how a group's suite label is shown. */
export const suiteLabelText = (label: string | null): string => (label === null ? 'no suite label' : `label ${quoteLabel(label)}`);

/**
 * Where a group's trials are from, as far as the other groups differ: ' on lab1 · nvme0',
 * ', label “fw 2.1”', both, or '' where all share them. For notes about one group among several.
 */
export function groupWhere(x: { systemLabel: string; driveLabel: string | null; suiteLabel: string | null }, o: { places: boolean; labels: boolean }): string {
  return `${o.places ? ` on ${placeLabel(x)}` : ''}${o.labels ? `, ${suiteLabelText(x.suiteLabel)}` : ''}`;
}

/** "suite 3", "suites 3, 5" ("suites none" for none): the suites a side or a label pools. */
export const suitesText = (ids: readonly number[]): string => `${ids.length === 1 ? 'suite' : 'suites'} ${ids.join(', ') || 'none'}`;

/** '“fw 2.1”: suite 1; “fw 2.2”: suites 2, 3; none: suite 4' — suite labels (null: none) with their suites. */
export function labelGroupsText(groups: readonly { label: string | null; suiteIds: readonly number[] }[]): string {
  return groups.map((g) => `${g.label === null ? 'none' : quoteLabel(g.label)}: ${suitesText(g.suiteIds)}`).join('; ');
}

/**
 * How to get a verdict between suite labels, in the CLI's words: the command for the first two
 * labelled ones (quoted to paste into a shell as they are: a label is any text), or, with fewer than
 * two, that a suite without a label takes part in none.
 */
export function labelsVerdictText(groups: readonly { label: string | null }[]): string {
  const named = groups.filter((g) => g.label !== null);
  return named.length >= 2
    ? `for a verdict between two labels: kvbench report --compare ${shellQuote(named[0].label!)} ${shellQuote(named[1].label!)} --labels`
    : 'kvbench report --compare A B --labels gives a verdict between two labels (a suite without one takes part in none)';
}

/**
 * Where a report's suites carry more than one suite label (unlabelled counting as one): which suites
 * each label has, and that each label's trials are aggregated apart. Null where they share one.
 * Each surface adds how to get a verdict between two labels in its own words.
 */
export function labelsApartText(groups: readonly { label: string | null; suiteIds: readonly number[] }[]): string | null {
  if (groups.length < 2) return null;
  return `These suites carry ${groups.length} different suite labels (${labelGroupsText(groups)}): each label's trials are aggregated apart, never pooled into one median`;
}
