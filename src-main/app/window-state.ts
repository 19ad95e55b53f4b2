// The main window's size and position, kept between runs (userData/window-state.json) and put back
// only where a display still shows it. 1280×800 by default, never smaller than the layout needs.
import fs from 'node:fs';

export interface WindowBounds {
  x?: number;
  y?: number;
  width: number;
  height: number;
}

export interface WindowState {
  bounds: WindowBounds;
  maximized: boolean;
}

export interface DisplayArea {
  x: number;
  y: number;
  width: number;
  height: number;
}

export const DEFAULT_WINDOW: WindowState = { bounds: { width: 1280, height: 800 }, maximized: false };
export const MIN_WIDTH = 1024;
export const MIN_HEIGHT = 680;

function isNum(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v);
}

export function parseWindowState(json: unknown): WindowState | null {
  if (typeof json !== 'object' || json === null) return null;
  const b = (json as { bounds?: Record<string, unknown> }).bounds;
  if (!b || !isNum(b.width) || !isNum(b.height)) return null;
  const bounds: WindowBounds = { width: Math.max(MIN_WIDTH, Math.round(b.width)), height: Math.max(MIN_HEIGHT, Math.round(b.height)) };
  if (isNum(b.x) && isNum(b.y)) {
    bounds.x = Math.round(b.x);
    bounds.y = Math.round(b.y);
  }
  return { bounds, maximized: (json as { maximized?: unknown }).maximized === true };
}

/** The saved state if at least a 100×60 corner of it is on some display; otherwise centred defaults of the saved size. */
export function restoreWindowState(saved: WindowState | null, displays: readonly DisplayArea[]): WindowState {
  if (!saved) return DEFAULT_WINDOW;
  const { x, y, width, height } = saved.bounds;
  if (x === undefined || y === undefined) return saved;
  const visible = displays.some((d) => x + 100 <= d.x + d.width && x + width - 100 >= d.x && y >= d.y - 10 && y + 60 <= d.y + d.height);
  return visible ? saved : { bounds: { width, height }, maximized: saved.maximized };
}

export function loadWindowState(file: string): WindowState | null {
  try {
    return parseWindowState(JSON.parse(fs.readFileSync(file, 'utf8')));
  } catch {
    return null;
  }
}

export function saveWindowState(file: string, state: WindowState): void {
  try {
    fs.writeFileSync(file, `${JSON.stringify(state)}\n`);
  } catch {
    // Losing the window position is not worth an error dialog.
  }
}
