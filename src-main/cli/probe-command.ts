// `kvbench probe --dir DIR`: the raw-limit probe (sequential direct writes, then reads, at the
// engine's block size and concurrency) in its own process, started with UV_THREADPOOL_SIZE sized
// to the I/Os in flight. Prints a table; `--output FILE` also writes the result as JSON, and
// `--json` prints the JSON instead of the table.

import { fork } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { PROBE_PHASES, validateProbeOptions, type ProbeOptions } from '../engine/probe/probe-options.ts';
import type { EngineErrorData } from '../../src-shared/engine-protocol.ts';
import { jsonText, printable, shownInput } from '../../src-shared/domain/label-text.ts';
import { ProbeToHostSchema, type HostToProbe, type ProbeResult } from '../engine/probe/probe-protocol.ts';
import { formatProbeReport } from '../engine/probe/probe-report.ts';
import { PROBE_DIR_PREFIX } from '../engine/probe/raw-limit-probe.ts';
import { SYSTEM_DIRECTORIES_TEXT, systemDirectoryError } from '../engine/config/system-directories.ts';
import { emptyValueErrors, numberFlag } from './command-args.ts';
import { wrapText } from './help-text.ts';
import { outputFileProblem, writeFileAtomic } from '../util/write-file-atomic.ts';
import { statOrNull } from '../util/stat-or-null.ts';
import { signalExitCode, watchStopSignals } from './stop-signals.ts';

const EXIT_OK = 0;
const EXIT_FAILED = 1;
/** libuv threads beyond the probe's I/Os, for opens, fdatasyncs and closes. */
const UV_THREADS_FOR_METADATA = 4;
/** A cancelled probe gets this long to stop and remove its files before it is killed. */
const CANCEL_GRACE_MS = 30_000;
const PROBE_PROCESS = fileURLToPath(new URL('../engine/probe/probe-process.ts', import.meta.url));

export const PROBE_HELP = `Usage: kvbench probe --dir DIR [flags]

Measures the raw sequential limit of the device behind DIR: direct writes, then direct reads, in
--io-chunk-mib requests with --io-depth of them in flight (one file and one I/O per lane, like fio
--rw=write/read --direct=1 --ioengine=psync --numjobs=<io-depth>). Compare a run's storage
bandwidth with it to state the engine's efficiency. The probe works in its own subdirectory of DIR
and removes it at the end.

  --dir DIR              directory on the device to measure (required; must exist and be
                         writable). Refused, also behind a symbolic link, as run's --cache-dir:
${wrapText(`${SYSTEM_DIRECTORIES_TEXT}.`, 74, ' '.repeat(25))}  --io-chunk-mib N       size of one I/O in MiB (default 16, as kvbench run)
  --io-depth N           I/Os in flight (default 16, as kvbench run)
  --duration S           seconds per phase (default 10)
  --size-gib G           total size of the probe's files (default: min(8, 20 % of the free space))
  --direct-io MODE       auto | on | off (default auto: buffered where O_DIRECT is refused, flagged)
  --only PHASE           write | read (default: both; a read-only probe lays its files out untimed)
  --output FILE          also write the result as JSON to FILE
  --json                 print the JSON result instead of the table
  -h, --help             this text

Exit codes: 0 complete; 1 invalid input or failed; 130 stopped by Ctrl-C (SIGINT), 143 by SIGTERM,
129 by SIGHUP (the probe's files are removed either way).
`;

type Parsed = { ok: true; options: ProbeOptions; output: string | null; json: boolean } | { ok: false; errors: string[] } | { ok: 'help' };

/** Flags → validated probe options. Never throws. */
export function parseProbeArgs(argv: readonly string[], cwd: string = process.cwd()): Parsed {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        dir: { type: 'string' },
        'io-chunk-mib': { type: 'string' },
        'io-depth': { type: 'string' },
        duration: { type: 'string' },
        'size-gib': { type: 'string' },
        'direct-io': { type: 'string' },
        only: { type: 'string' },
        output: { type: 'string' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (err) {
    return { ok: false, errors: [(err as Error).message] };
  }
  if (values.help) return { ok: 'help' };
  // An empty --dir is the current directory, which the probe would fill: refused, as --output.
  const errors = emptyValueErrors(values, ['dir', 'output']);
  const str = (k: string): string | undefined => values[k] as string | undefined;
  const dirEmpty = str('dir')?.trim() === '';
  const sizeGib = numberFlag('--size-gib', str('size-gib'), errors);
  // A refused --only is said here, in the flag's words, and left out of the validation below (which would say it again in zod's).
  const givenOnly = str('only');
  const onlyKnown = givenOnly === undefined || (PROBE_PHASES as readonly string[]).includes(givenOnly);
  if (!onlyKnown) errors.push(`--only must be write or read (got '${shownInput(givenOnly ?? '')}')`);
  const only = onlyKnown ? givenOnly : undefined;
  const raw: Record<string, unknown> = {
    dir: str('dir') === undefined || dirEmpty ? '' : path.resolve(cwd, str('dir')!),
    ioChunkMib: numberFlag('--io-chunk-mib', str('io-chunk-mib'), errors),
    ioDepth: numberFlag('--io-depth', str('io-depth'), errors),
    durationS: numberFlag('--duration', str('duration'), errors),
    sizeBytes: sizeGib === undefined ? undefined : sizeGib > 0 ? Math.round(sizeGib * 1024 ** 3) : -1,
    directIo: str('direct-io'),
    phases: only === undefined ? undefined : [only],
  };
  for (const k of Object.keys(raw)) if (raw[k] === undefined) delete raw[k];
  // The probe writes gigabytes where it is pointed: never into /etc, /dev … (also behind a link), as
  // every other storage use of a directory refuses them.
  const systemDir = raw.dir === '' ? null : systemDirectoryError(raw.dir as string, '--dir');
  if (systemDir !== null) errors.push(systemDir);
  else if (raw.dir !== '') {
    const notWritable = directoryNotWritable(raw.dir as string);
    if (notWritable !== null) errors.push(notWritable);
  }
  // Every problem at once: a flag that failed conversion was left out, so validation sees its default.
  const v = validateProbeOptions(raw);
  // An empty --dir is refused above: not also "--dir is required".
  const optionErrors = v.ok ? [] : v.errors.filter((e) => !(dirEmpty && e === '--dir is required'));
  if (errors.length > 0 || !v.ok) return { ok: false, errors: [...errors, ...optionErrors] };
  const output = str('output');
  if (output !== undefined) {
    const problem = outputFileProblem(path.resolve(cwd, output));
    if (problem !== null) return { ok: false, errors: [`cannot write ${printable(output)}: ${problem}`] };
  }
  return { ok: true, options: v.options, output: output === undefined ? null : path.resolve(cwd, output), json: Boolean(values.json) };
}

/**
 * What keeps the probe from writing its files in `dir`, said with the other argument errors like kvbench
 * run's --cache-dir: missing (the probe creates no directory: it measures the device one is on), not a
 * directory, or not writable (a read-only filesystem, permissions); else null. Each was the probe
 * process's raw "ENOENT … stat" or EROFS once it had started.
 */
function directoryNotWritable(dir: string): string | null {
  const st = statOrNull(dir);
  if (!st) return `--dir does not exist: ${printable(dir)}`;
  if (!st.isDirectory()) return `--dir is not a directory: ${printable(dir)}`;
  try {
    fs.accessSync(dir, fs.constants.W_OK | fs.constants.X_OK);
    return null;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'EROFS' ? 'a read-only file system' : code === 'EACCES' || code === 'EPERM' ? 'permission denied' : (code ?? (err as Error).message);
    return `--dir is not writable: ${printable(dir)} (${why})`;
  }
}

type ProbeRun = { ok: true; result: ProbeResult } | ({ ok: false } & EngineErrorData);

/** Starts the probe process, relays progress to `onProgress`, and resolves with its result. */
export function runProbeProcess(
  options: ProbeOptions,
  hooks: { onProgress?: (line: string) => void; cancelSignal?: AbortSignal } = {},
): Promise<ProbeRun> {
  // Cancelled already (a suite stopped during detection): an abort listener would never fire, and the
  // probe would run its full course.
  if (hooks.cancelSignal?.aborted) return Promise.resolve({ ok: false, code: 'CANCELLED', message: 'cancelled before the probe started' });
  const child = fork(PROBE_PROCESS, [], {
    env: { ...process.env, UV_THREADPOOL_SIZE: String(options.ioDepth + UV_THREADS_FOR_METADATA) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    serialization: 'advanced',
  });
  return new Promise<ProbeRun>((resolve) => {
    let settled: ProbeRun | null = null;
    let killTimer: NodeJS.Timeout | null = null;
    const onCancel = (): void => {
      if (child.connected) child.send({ type: 'cancel' } satisfies HostToProbe);
      killTimer ??= setTimeout(() => child.kill('SIGKILL'), CANCEL_GRACE_MS);
    };
    hooks.cancelSignal?.addEventListener('abort', onCancel, { once: true });
    child.on('message', (raw: unknown) => {
      const parsed = ProbeToHostSchema.safeParse(raw);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        settled ??= { ok: false, code: 'PROTOCOL', message: `malformed message from the probe process (${issue.path.join('.') || 'the message'}: ${issue.message})` };
        child.kill('SIGKILL');
        return;
      }
      const msg = parsed.data;
      if (msg.type === 'progress') {
        const p = msg.progress;
        hooks.onProgress?.(
          `${p.phase.padEnd(9)} ${(p.elapsedNs / 1e9).toFixed(0).padStart(3)}s  ${((p.bytes / 1024 ** 3)).toFixed(2)} GiB  ${(p.bytesPerSec / 1e9).toFixed(2)} GB/s`,
        );
      } else if (msg.type === 'result') {
        settled ??= { ok: true, result: msg.result };
      } else {
        settled ??= { ok: false, code: msg.error.code, message: msg.error.message };
      }
    });
    child.on('error', (err) => {
      settled ??= { ok: false, code: 'ENGINE_CRASHED', message: `could not start the probe process: ${err.message}` };
    });
    child.on('exit', (code, signal) => {
      if (killTimer) clearTimeout(killTimer);
      hooks.cancelSignal?.removeEventListener('abort', onCancel);
      const outcome: ProbeRun = settled ?? {
        ok: false,
        code: 'ENGINE_CRASHED',
        message: `the probe process ended without a result (exit ${code ?? 'none'}, signal ${signal ?? 'none'})`,
      };
      if (!outcome.ok && child.pid !== undefined) {
        // A killed probe cannot remove its own files: its directory carries its pid.
        void removeProbeDirs(options.dir, child.pid).finally(() => resolve(outcome));
      } else {
        resolve(outcome);
      }
    });
    child.send({ type: 'start', options } satisfies HostToProbe);
  });
}

/** Removes the working directories a probe process `pid` left in `dir` (only those: prefix and pid). */
export async function removeProbeDirs(dir: string, pid: number): Promise<void> {
  const prefix = `${PROBE_DIR_PREFIX}${pid}-`;
  const names = await fsp.readdir(dir).catch(() => [] as string[]);
  for (const name of names) {
    if (name.startsWith(prefix)) await fsp.rm(path.join(dir, name), { recursive: true, force: true });
  }
}

/** `kvbench probe`. Returns the exit code. */
export async function probeCommand(argv: string[]): Promise<number> {
  const parsed = parseProbeArgs(argv);
  if (parsed.ok === 'help') {
    process.stdout.write(PROBE_HELP);
    return EXIT_OK;
  }
  if (!parsed.ok) {
    process.stderr.write(`kvbench probe: invalid arguments:\n  ${parsed.errors.join('\n  ')}\n`);
    return EXIT_FAILED;
  }
  const cancel = new AbortController();
  // A repeated signal changes nothing: the probe's files are removed either way.
  const signals = watchStopSignals({
    onStop: (signal) => {
      process.stderr.write(`\n${signal}: stopping the probe and removing its files\n`);
      cancel.abort();
    },
  });
  const interruptedExit = (): number => signalExitCode(signals.signal!);
  const tty = Boolean(process.stderr.isTTY);
  let lastPlainMs = 0;
  try {
    const run = await runProbeProcess(parsed.options, {
      cancelSignal: cancel.signal,
      onProgress: (line) => {
        if (tty) process.stderr.write(`\r\x1b[2K${line}`);
        else if (performance.now() - lastPlainMs > 5000) {
          lastPlainMs = performance.now();
          process.stderr.write(`${line}\n`);
        }
      },
    });
    if (tty) process.stderr.write('\r\x1b[2K');
    if (!run.ok) {
      process.stderr.write(`kvbench probe failed (${run.code}): ${run.message}\n`);
      return signals.signal ? interruptedExit() : EXIT_FAILED;
    }
    const json = `${jsonText(run.result, 2)}\n`;
    process.stdout.write(parsed.json ? json : formatProbeReport(run.result));
    if (parsed.output !== null) {
      try {
        await writeFileAtomic(parsed.output, json);
        process.stderr.write(`Probe result saved to ${printable(parsed.output)}\n`);
      } catch (err) {
        process.stderr.write(`could not write ${printable(parsed.output)}: ${printable((err as Error).message)}\n`);
        return EXIT_FAILED;
      }
    }
    return run.result.status === 'complete' ? EXIT_OK : interruptedExit();
  } finally {
    signals.dispose();
  }
}
