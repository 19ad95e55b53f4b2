import { parseArgs, type ParseArgsConfig } from 'node:util';

/**
 * Parses a command's flags the way every kvbench command does: an invalid flag prints the message and
 * the usage to stderr (exit code 1), `--help` prints the usage to stdout (exit code 0). Returns the
 * parsed flags, or the exit code when the command is already answered.
 */
export function parseCommandArgs<T extends ParseArgsConfig>(command: string, usage: string, config: T): ReturnType<typeof parseArgs<T>> | number {
  let parsed: ReturnType<typeof parseArgs<T>>;
  try {
    parsed = parseArgs(config.args ? ({ ...config, args: joinNegativeValues(config.args, config.options ?? {}) } as T) : config);
  } catch (err) {
    process.stderr.write(`kvbench ${command}: ${(err as Error).message}\n\n${usage}`);
    return 1;
  }
  if ((parsed.values as { help?: unknown }).help === true) {
    process.stdout.write(usage);
    return 0;
  }
  return parsed;
}

/**
 * `--flag -1` as `--flag=-1`: Node's parseArgs takes a value starting with '-' for a forgotten value
 * ("argument is ambiguous"), while a negative number is plainly a value, which the command then
 * range-checks with a message naming the flag (as `kvbench run` does, the way argparse does).
 */
function joinNegativeValues(args: readonly string[], options: NonNullable<ParseArgsConfig['options']>): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--') return [...out, ...args.slice(i)]; // positionals from here on
    const name = args[i].startsWith('--') && !args[i].includes('=') ? args[i].slice(2) : undefined;
    const next = args[i + 1];
    if (name !== undefined && options[name]?.type === 'string' && next !== undefined && /^-(\d|\.\d)/.test(next)) {
      out.push(`${args[i]}=${next}`);
      i++;
    } else {
      out.push(args[i]);
    }
  }
  return out;
}
