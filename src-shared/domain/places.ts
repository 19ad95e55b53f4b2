/**
 * The "place" of a measurement: the system it ran on and the drive (null: unknown). Aggregates never
 * mix places, and every output (terminal, exports, the app's report) names a group's place the same way.
 *
 * Pure TypeScript: no Node, no DOM.
 */

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
