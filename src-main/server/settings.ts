// The app's settings (database location, default cache directory, display units): one JSON file,
// validated on read (a damaged or foreign file falls back to the defaults and says so) and
// replaced atomically on write. Shared by the Electron app and `kvbench serve`.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { SettingsSchema, type Settings } from '../../src-shared/ipc/contract.ts';
import { defaultDataDir, resolveDatabasePath } from '../store/data-dir.ts';
import { writeFileAtomic } from '../util/write-file-atomic.ts';

export const SETTINGS_FILE_NAME = 'settings.json';

export function defaultSettingsFile(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(defaultDataDir(env), SETTINGS_FILE_NAME);
}

export function defaultSettings(env: NodeJS.ProcessEnv = process.env): Settings {
  return { databasePath: resolveDatabasePath(null, env), defaultCacheDir: '', byteUnits: 'decimal', latencyUnit: 'ms' };
}

export interface LoadedSettings {
  settings: Settings;
  /** What the file itself holds: the settings the user chose, over which the defaults apply. */
  chosen: Partial<Settings>;
  /** Why the file was not used, when it exists but could not be read. */
  problem: string | null;
}

/** Reads the settings file; missing keys take their defaults, unknown keys are dropped. */
export function loadSettings(file: string, defaults: Settings): LoadedSettings {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { settings: { ...defaults }, chosen: {}, problem: null };
    return { settings: { ...defaults }, chosen: {}, problem: `could not read ${file}: ${(err as Error).message}` };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { settings: { ...defaults }, chosen: {}, problem: `${file} is not JSON (${(err as Error).message}); using the defaults` };
  }
  const chosen = pick(json);
  const merged = SettingsSchema.safeParse({ ...defaults, ...chosen });
  if (!merged.success) return { settings: { ...defaults }, chosen: {}, problem: `${file} has invalid settings; using the defaults` };
  return { settings: merged.data, chosen, problem: null };
}

function pick(json: unknown): Partial<Settings> {
  if (typeof json !== 'object' || json === null) return {};
  const keys = Object.keys(SettingsSchema.shape) as (keyof Settings)[];
  const out: Record<string, unknown> = {};
  for (const k of keys) if (k in json) out[k] = (json as Record<string, unknown>)[k];
  return out as Partial<Settings>;
}

/**
 * Saves the settings the user chose (only those: a database path that came from --db or KVBENCH_DB,
 * or a default, is not pinned in the file by changing the units), atomically, readable by the user only.
 */
export async function saveSettings(file: string, settings: Partial<Settings>): Promise<void> {
  await fsp.mkdir(path.dirname(file), { recursive: true });
  await writeFileAtomic(file, `${JSON.stringify(settings, null, 2)}\n`, { mode: 0o600 });
}
