import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileWriteError, outputFileProblem, resolveOutputTarget, writeFileAtomic } from '../../../src-main/util/write-file-atomic.ts';
import { removeTempDirs, tempDir } from '../store/fixtures.ts';

/** Readers still running: killed after each test, so a write that never came leaves no `cat` waiting. */
const readers: ChildProcess[] = [];

afterEach(() => {
  for (const child of readers.splice(0)) child.kill();
  removeTempDirs();
});

/** A `cat` reading the FIFO `fifo`; `read` resolves with all it read. */
function reader(fifo: string): { read: Promise<string> } {
  const child = spawn('cat', [fifo], { stdio: ['ignore', 'pipe', 'inherit'] });
  readers.push(child);
  let text = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
  const read = new Promise<string>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', () => resolve(text));
  });
  return { read };
}

describe('writeFileAtomic', () => {
  it('replaces an existing file, leaving no temporary behind', async () => {
    const file = path.join(tempDir(), 'out.json');
    fs.writeFileSync(file, 'old');
    await writeFileAtomic(file, 'new');
    expect(fs.readFileSync(file, 'utf8')).toBe('new');
    expect(fs.readdirSync(path.dirname(file))).toEqual(['out.json']);
  });

  it('writes through a symbolic link to the file it leads to, and the link stays a link', async () => {
    const dir = tempDir();
    fs.mkdirSync(path.join(dir, 'results'));
    const target = path.join(dir, 'results', 'target.csv');
    fs.writeFileSync(target, 'original');
    const link = path.join(dir, 'link.csv');
    fs.symlinkSync(target, link);
    await writeFileAtomic(link, 'new');
    expect(fs.lstatSync(link).isSymbolicLink()).toBe(true);
    expect(fs.readFileSync(target, 'utf8')).toBe('new');
    // The temporary was made beside the target (one filesystem for the rename) and is gone.
    expect(fs.readdirSync(path.join(dir, 'results'))).toEqual(['target.csv']);
    expect(fs.readdirSync(dir).sort()).toEqual(['link.csv', 'results']);
  });

  it('creates the file a dangling link names (relative to the link), as a shell redirection does', async () => {
    const dir = tempDir();
    fs.mkdirSync(path.join(dir, 'sub'));
    const link = path.join(dir, 'sub', 'latest.json');
    fs.symlinkSync('../runs-1.json', link);
    await writeFileAtomic(link, '{}');
    expect(fs.lstatSync(link).isSymbolicLink()).toBe(true);
    expect(fs.readFileSync(path.join(dir, 'runs-1.json'), 'utf8')).toBe('{}');
  });

  it('writes into a FIFO (and a link to one) without replacing it', async () => {
    const dir = tempDir();
    const fifo = path.join(dir, 'pipe');
    execFileSync('mkfifo', [fifo]);
    const link = path.join(dir, 'out.csv');
    fs.symlinkSync(fifo, link);
    for (const file of [fifo, link]) {
      const cat = reader(fifo);
      expect(resolveOutputTarget(file)).toEqual({ kind: 'direct', path: fifo });
      await writeFileAtomic(file, 'a,b\n1,2\n');
      expect(await cat.read).toBe('a,b\n1,2\n');
    }
    expect(fs.statSync(fifo).isFIFO()).toBe(true);
    expect(fs.lstatSync(link).isSymbolicLink()).toBe(true);
    expect(fs.readdirSync(dir).sort()).toEqual(['out.csv', 'pipe']);
  });

  it('writes through a link to its own stdout (what /dev/stdout is) after what it printed: a socket, a pipe, a file', async () => {
    const dir = tempDir();
    // Like /dev/stdout → /proc/self/fd/1, in a folder of the test's own.
    const link = path.join(dir, 'stdout');
    fs.symlinkSync('/proc/self/fd/1', link);
    const script = path.join(dir, 'write.mjs');
    const module = new URL('../../../src-main/util/write-file-atomic.ts', import.meta.url).href;
    fs.writeFileSync(script, `const { writeFileAtomic } = await import(${JSON.stringify(module)});\nprocess.stdout.write('summary\\n');\nawait writeFileAtomic(${JSON.stringify(link)}, 'results\\n');\n`);
    const node = process.execPath;
    // Node's own child pipes are sockets, which no path can open.
    expect(execFileSync(node, [script], { encoding: 'utf8' })).toBe('summary\nresults\n');
    expect(execFileSync('sh', ['-c', '"$0" "$1" | cat', node, script], { encoding: 'utf8' })).toBe('summary\nresults\n');
    const file = path.join(dir, 'log.txt');
    fs.writeFileSync(file, '');
    const fd = fs.openSync(file, 'w');
    try {
      execFileSync(node, [script], { stdio: ['ignore', fd, 'inherit'] });
    } finally {
      fs.closeSync(fd);
    }
    expect(fs.readFileSync(file, 'utf8')).toBe('summary\nresults\n');
    expect(fs.readlinkSync(link)).toBe('/proc/self/fd/1');
  });

  it("appends to the file behind a descriptor link, after what was written to it first (a shell's `> file` behind /dev/stdout)", async () => {
    const dir = tempDir();
    const file = path.join(dir, 'log.txt');
    const fd = fs.openSync(file, 'a');
    try {
      fs.writeSync(fd, 'summary\n');
      const inode = fs.statSync(file).ino;
      const link = path.join(dir, 'stdout');
      fs.symlinkSync(`/proc/self/fd/${fd}`, link);
      expect(resolveOutputTarget(link)).toEqual({ kind: 'direct', path: `/proc/${process.pid}/fd/${fd}` });
      await writeFileAtomic(link, 'results\n');
      expect(fs.readFileSync(file, 'utf8')).toBe('summary\nresults\n');
      expect(fs.statSync(file).ino).toBe(inode);
      expect(fs.lstatSync(link).isSymbolicLink()).toBe(true);
    } finally {
      fs.closeSync(fd);
    }
  });

  it('refuses a loop of links with a FileWriteError, replacing neither link', async () => {
    const dir = tempDir();
    const a = path.join(dir, 'a.json');
    const b = path.join(dir, 'b.json');
    fs.symlinkSync(b, a);
    fs.symlinkSync(a, b);
    const failure = await writeFileAtomic(a, '{}').catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(FileWriteError);
    expect((failure as FileWriteError).message).toMatch(/symbolic links/);
    expect(fs.lstatSync(a).isSymbolicLink() && fs.lstatSync(b).isSymbolicLink()).toBe(true);
  });
});

describe('outputFileProblem', () => {
  it('accepts a FIFO, and judges a link by the folder of its target', () => {
    const dir = tempDir();
    const fifo = path.join(dir, 'pipe');
    execFileSync('mkfifo', [fifo]);
    expect(outputFileProblem(fifo)).toBeNull();
    const link = path.join(dir, 'link.json');
    fs.symlinkSync(path.join(dir, 'gone', 'out.json'), link);
    expect(outputFileProblem(link)).toBe(`its folder ${path.join(dir, 'gone')} does not exist`);
    const toDir = path.join(dir, 'dir-link');
    fs.symlinkSync(dir, toDir);
    expect(outputFileProblem(toDir)).toBe(`${toDir} is a directory`);
  });
});
