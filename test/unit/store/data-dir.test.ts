import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultDataDir, resolveDatabasePath } from '../../../src-main/store/data-dir.ts';

describe('database location', () => {
  it('follows XDG on Linux, ignoring a relative XDG_DATA_HOME', () => {
    expect(defaultDataDir({}, 'linux', '/home/ada')).toBe('/home/ada/.local/share/kvbench');
    expect(defaultDataDir({ XDG_DATA_HOME: '/data/xdg' }, 'linux', '/home/ada')).toBe('/data/xdg/kvbench');
    expect(defaultDataDir({ XDG_DATA_HOME: 'relative' }, 'linux', '/home/ada')).toBe('/home/ada/.local/share/kvbench');
    expect(defaultDataDir({}, 'darwin', '/Users/ada')).toBe('/Users/ada/Library/Application Support/kvbench');
    expect(defaultDataDir({ APPDATA: 'C:\\Users\\ada\\AppData\\Roaming' }, 'win32', 'C:\\Users\\ada')).toBe(path.join('C:\\Users\\ada\\AppData\\Roaming', 'kvbench'));
  });

  it('--db wins over KVBENCH_DB, which wins over the data directory', () => {
    expect(resolveDatabasePath('/x/a.db', { KVBENCH_DB: '/y/b.db' })).toBe('/x/a.db');
    expect(resolveDatabasePath(null, { KVBENCH_DB: '/y/b.db' })).toBe('/y/b.db');
    expect(resolveDatabasePath(undefined, { XDG_DATA_HOME: '/d' })).toBe('/d/kvbench/kvbench.db');
  });
});
