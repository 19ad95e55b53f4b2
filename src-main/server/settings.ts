// The app's settings (database location, default cache directory, display units): one JSON file,
// validated key by key on read (what cannot be used is named, and kept in the file) and replaced
// atomically on write. Shared by the Electron app and `kvbench serve`.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { SettingsSchema, type Settings } from '../../src-shared/ipc/contract.ts';
import { databaseSystemDirectoryOf, resolveRealPath } from '../engine/config/system-directories.ts';
import { defaultDataDir, resolveDatabasePath } from '../store/data-dir.ts';
import { writeFileAtomic } from '../util/write-file-atomic.ts';
import { wholeFileText } from '../engine/workload/sources/text-encoding.ts';

export const SETTINGS_FILE_NAME = 'settings.json';

export function defaultSettingsFile(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(defaultDataDir(env), SETTINGS_FILE_NAME);
}

export function defaultSettings(env: NodeJS.ProcessEnv = process.env): Settings {
  return { databasePath: resolveDatabasePath(null, env), defaultCacheDir: '', byteUnits: 'decimal', latencyUnit: 'ms' };
}

/** Names under which an empty file is taken to be a database someone created for kvbench (`touch kvbench.db`). */
export const DATABASE_EXTENSIONS = ['.db', '.sqlite', '.sqlite3'];

/**
 * Why `file` cannot be the app's database wherever it is chosen (Settings, or the settings file), or
 * null. SQLite creates the file and its -wal and -shm companions wherever it is told, and treats an
 * existing empty file as an empty database. So a path in a system directory is refused (see
 * databaseSystemDirectoryOf: not /var/lib, nor the user's own home), and so is an existing empty file
 * not named like a database (someone's empty configuration file). A non-empty file that is not
 * kvbench's is refused by the store itself (DB_CORRUPT, DB_FOREIGN).
 */
export function databasePathRefusal(file: string): string | null {
  const real = resolveRealPath(file);
  const systemDir = databaseSystemDirectoryOf(real);
  if (systemDir) return `the database cannot be in a system directory: ${real} is in ${systemDir}`;
  const st = fs.statSync(real, { throwIfNoEntry: false });
  if (st?.isFile() && st.size === 0 && !DATABASE_EXTENSIONS.includes(path.extname(real).toLowerCase())) {
    return `${real} is an empty file not named like a database (${DATABASE_EXTENSIONS.join(', ')}); kvbench will not take it over. Choose a new file name, or an existing kvbench database.`;
  }
  return null;
}

/**
 * Why the database a settings file names is not opened, or null. Settings saves a database it has
 * opened (so it exists), by its absolute path: one that does not exist now was moved or deleted, is
 * misspelt (the file was edited by hand) or lies on a file system not mounted. Opening it would create
 * a new, empty database there (and its folders), whose empty history would pass for the user's; so
 * kvbench creates none from the file. A relative path would name a different database from every
 * folder kvbench is started in.
 */
function settingsDatabaseRefusal(file: string): string | null {
  if (!path.isAbsolute(file)) return 'is not an absolute path (it would name a different file from each folder kvbench is started in)';
  let st: fs.Stats | undefined;
  try {
    st = fs.statSync(file, { throwIfNoEntry: false });
  } catch (err) {
    // A file on the way instead of a folder: nothing there. Any other error (EACCES …) the open reports.
    if ((err as NodeJS.ErrnoException).code !== 'ENOTDIR') return null;
  }
  if (st === undefined) return 'does not exist (moved, deleted, misspelt, or on a file system that is not mounted?); kvbench creates no database from the settings file';
  if (!st.isFile()) return 'is not a file';
  return databasePathRefusal(file);
}

export interface SettingsProblem {
  /** The setting the problem is about; null: the whole file. */
  key: string | null;
  message: string;
}

export interface LoadedSettings {
  settings: Settings;
  /** The valid settings the file holds: the ones the user chose, over which the defaults apply. */
  chosen: Partial<Settings>;
  /**
   * What the file holds that could not be used (an invalid value, a key this version does not know),
   * exactly as written: a save writes it back, so a typo is fixed by the user, never erased by kvbench.
   */
  unused: Record<string, unknown>;
  /** Each part of the file that was not used, by key, and why; empty: all of it was. */
  problems: SettingsProblem[];
  /** Why a save must not replace the file (it could not be read as settings, so it would be lost); null: it may. */
  saveRefused: string | null;
}

/**
 * Reads the settings file key by key: a valid key is used, an invalid or unknown one is named (with
 * why) and left out, and missing keys take their defaults. One bad value never costs the others — least
 * of all the database the user chose, whose loss would show another database's history unexplained.
 */
export function loadSettings(file: string, defaults: Settings): LoadedSettings {
  const unusable = (why: string): LoadedSettings => {
    const message = `${why}: the default settings apply, no database is opened from them, and Settings cannot be saved over the file until it is fixed or removed (then restart kvbench)`;
    return { settings: { ...defaults }, chosen: {}, unused: {}, problems: [{ key: null, message }], saveRefused: message };
  };
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { settings: { ...defaults }, chosen: {}, unused: {}, problems: [], saveRefused: null };
    return unusable(`could not read the settings file ${file} (${(err as Error).message})`);
  }
  // A byte-order mark is read past; a compressed, UTF-16 or binary file is named as such.
  const decoded = wholeFileText(bytes);
  if (!decoded.ok) return unusable(`the settings file ${file}${decoded.line === null ? '' : `, line ${decoded.line},`} is not usable: ${decoded.problem}`);
  const text = decoded.text;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return unusable(`the settings file ${file} is not JSON (${(err as Error).message})`);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return unusable(`the settings file ${file} holds ${Array.isArray(json) ? 'an array' : String(json === null ? 'null' : typeof json)}, not an object of settings`);

  const shape = SettingsSchema.shape;
  const chosen: Record<string, unknown> = {};
  const unused: Record<string, unknown> = Object.create(null); // a "__proto__" key stays a key, as written
  const problems: SettingsProblem[] = [];
  for (const [key, raw] of Object.entries(json)) {
    if (!Object.hasOwn(shape, key)) {
      unused[key] = raw;
      problems.push({ key, message: `the settings file ${file} has an unknown setting "${key}" (this kvbench knows ${Object.keys(shape).join(', ')}): ignored, and kept in the file` });
      continue;
    }
    const parsed = shape[key as keyof Settings].safeParse(raw);
    const refused = parsed.success && key === 'databasePath' ? settingsDatabaseRefusal(parsed.data as string) : null;
    if (parsed.success && refused === null) {
      chosen[key] = parsed.data;
      continue;
    }
    unused[key] = raw;
    const instead =
      key === 'databasePath'
        ? 'kvbench opens no database in its place, and keeps the value in the file until one is chosen in Settings or the file is fixed'
        : `the default (${JSON.stringify(defaults[key as keyof Settings])}) applies, and the value stays in the file until it is chosen in Settings or fixed there`;
    const why = parsed.success ? `names the database ${shortJson(raw)}, which ${refused}` : `has an invalid ${key}, ${shortJson(raw)} (${parsed.error.issues.map((i) => i.message).join('; ')})`;
    problems.push({ key, message: `the settings file ${file} ${why}: ${instead}` });
  }
  return { settings: { ...defaults, ...chosen }, chosen: chosen as Partial<Settings>, unused, problems, saveRefused: null };
}

/** A value as the file has it, cut short: a pasted blob must not flood the log or the page. */
function shortJson(value: unknown): string {
  const s = JSON.stringify(value) ?? String(value);
  return s.length > 80 ? `${s.slice(0, 77)}…` : s;
}

/**
 * Saves the settings the user chose (only those: a database path that came from --db or KVBENCH_DB,
 * or a default, is not pinned in the file by changing the units), with what the file held that could
 * not be used (LoadedSettings.unused) written back as it was, atomically, readable by the user only.
 */
export async function saveSettings(file: string, chosen: Partial<Settings>, unused: Record<string, unknown> = {}): Promise<void> {
  await fsp.mkdir(path.dirname(file), { recursive: true });
  await writeFileAtomic(file, `${JSON.stringify({ ...unused, ...chosen }, null, 2)}\n`, { mode: 0o600 });
}
