import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_WINDOW, MIN_HEIGHT, MIN_WIDTH, loadWindowState, parseWindowState, restoreWindowState, saveWindowState } from '../../../src-main/app/window-state.ts';
import { removeTempDirs, tempDir } from '../store/fixtures.ts';

afterEach(() => removeTempDirs());
const display = { x: 0, y: 0, width: 1920, height: 1080 };

describe('window state', () => {
  it('defaults to 1280×800 and never restores below the minimum size', () => {
    expect(DEFAULT_WINDOW.bounds).toEqual({ width: 1280, height: 800 });
    expect(restoreWindowState(null, [display])).toEqual(DEFAULT_WINDOW);
    expect(parseWindowState({ bounds: { width: 300, height: 200, x: 5, y: 5 } })).toEqual({ bounds: { width: MIN_WIDTH, height: MIN_HEIGHT, x: 5, y: 5 }, maximized: false });
    expect(parseWindowState({ bounds: { width: 'wide' } })).toBeNull();
    expect(parseWindowState(null)).toBeNull();
  });

  it('keeps the position on a connected display, and forgets it when that display is gone', () => {
    const onScreen = { bounds: { x: 100, y: 50, width: 1400, height: 900 }, maximized: true };
    expect(restoreWindowState(onScreen, [display])).toEqual(onScreen);
    const offScreen = { bounds: { x: 3000, y: 50, width: 1400, height: 900 }, maximized: false };
    expect(restoreWindowState(offScreen, [display])).toEqual({ bounds: { width: 1400, height: 900 }, maximized: false });
    expect(restoreWindowState(offScreen, [display, { x: 1920, y: 0, width: 2560, height: 1440 }])).toEqual(offScreen);
  });

  it('round-trips through its file, and shrugs off a damaged one', () => {
    const f = path.join(tempDir('kvb-win-'), 'window-state.json');
    expect(loadWindowState(f)).toBeNull();
    saveWindowState(f, { bounds: { x: 1, y: 2, width: 1300, height: 820 }, maximized: false });
    expect(loadWindowState(f)).toEqual({ bounds: { x: 1, y: 2, width: 1300, height: 820 }, maximized: false });
    saveWindowState(path.join(f, 'cannot', 'write'), DEFAULT_WINDOW); // no throw
  });
});
