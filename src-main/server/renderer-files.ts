// Reading the built renderer's files, for the served mode's static handler and the Electron app://
// protocol alike: the path a URL names is kept inside the renderer directory by its name (no `..`)
// and, here, by where it really is: a link in the directory that leads out of it is not followed.
import fsp from 'node:fs/promises';
import path from 'node:path';

/** The file's bytes, or null when it is missing or really lies outside `rootDir` (through a link). */
export async function readFileInside(rootDir: string, file: string): Promise<Buffer | null> {
  try {
    const [root, real] = await Promise.all([fsp.realpath(rootDir), fsp.realpath(file)]);
    if (!real.startsWith(root + path.sep)) return null;
    return await fsp.readFile(real);
  } catch {
    return null;
  }
}
