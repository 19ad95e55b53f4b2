import { parseArgs, type ParseArgsConfig } from 'node:util';

/**
 * Parses a command's flags the way every kvbench command does: an invalid flag prints the message and
 * the usage to stderr (exit code 1), `--help` prints the usage to stdout (exit code 0). Returns the
 * parsed flags, or the exit code when the command is already answered.
 */
export function parseCommandArgs<T extends ParseArgsConfig>(command: string, usage: string, config: T): ReturnType<typeof parseArgs<T>> | number {
  let parsed: ReturnType<typeof parseArgs<T>>;
  try {
    parsed = parseArgs(config);
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
