// The desktop app's --db, read from whatever command line started it (kvbench app, npm run app, a
// packaged app), as kvbench serve's.
import { describe, expect, it } from 'vitest';
import { databaseFlag, startFailureText } from '../../../src-main/app/app-args.ts';

describe('databaseFlag', () => {
  it('finds --db PATH and --db=PATH among Electron\'s own arguments; the last one wins; none is null', () => {
    expect(databaseFlag(['/usr/lib/electron', '/app'])).toEqual({ ok: true, databasePath: null });
    expect(databaseFlag(['/usr/lib/electron', '/app', '--no-sandbox', '--db', 'lab.db'])).toEqual({ ok: true, databasePath: 'lab.db' });
    expect(databaseFlag(['kvbench.AppImage', '--db=/data/lab.db', '--ozone-platform=wayland'])).toEqual({ ok: true, databasePath: '/data/lab.db' });
    expect(databaseFlag(['x', '--db', 'a.db', '--db=b.db'])).toEqual({ ok: true, databasePath: 'b.db' });
    // Not the flag: another one that starts alike.
    expect(databaseFlag(['x', '--dbx', 'a.db'])).toEqual({ ok: true, databasePath: null });
  });

  it('refuses --db without a value, or an empty one', () => {
    expect(databaseFlag(['x', '--db'])).toEqual({ ok: false, error: '--db needs a value: the database file' });
    expect(databaseFlag(['x', '--db='])).toEqual({ ok: false, error: '--db must not be empty' });
    expect(databaseFlag(['x', '--db', ''])).toEqual({ ok: false, error: '--db must not be empty' });
  });
});

describe('startFailureText', () => {
  const err = new Error('the window could not be created');
  err.stack = 'Error: the window could not be created\n    at runDesktopApp (src-main/app/main.ts:1:1)';

  it('says why the app could not start, without the stack, and how to see it', () => {
    expect(startFailureText(err, ['/usr/lib/electron', '/app'])).toBe('kvbench app: could not start: the window could not be created (start it with --log-level DEBUG to see where)\n');
    expect(startFailureText(err, ['x', '--log-level', 'INFO'])).not.toContain('at runDesktopApp');
    expect(startFailureText('not an Error', ['x'])).toBe('kvbench app: could not start: not an Error (start it with --log-level DEBUG to see where)\n');
  });

  it('adds the stack under --log-level DEBUG (either spelling; the last one given wins)', () => {
    const withStack = `kvbench app: could not start: ${err.stack}\n`;
    expect(startFailureText(err, ['x', '--log-level', 'DEBUG'])).toBe(withStack);
    expect(startFailureText(err, ['x', '--db', 'a.db', '--log-level=DEBUG'])).toBe(withStack);
    expect(startFailureText(err, ['x', '--log-level=DEBUG', '--log-level', 'INFO'])).not.toContain('at runDesktopApp');
  });
});
