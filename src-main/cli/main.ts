import { KVBENCH_VERSION } from '../../src-shared/domain/version.ts';

const USAGE = `kvbench ${KVBENCH_VERSION} — KV-cache offload benchmark for LLM inference (GPU → CPU RAM → storage)

Usage:
  kvbench run [flags]        run one benchmark (the reference kv-cache.py's flags; see kvbench run --help)
  kvbench probe --dir DIR    measure the device's raw sequential limit at the engine's block size and depth
  kvbench workload generate  write a replayable workload file (see kvbench workload generate --help)
  kvbench endpoint           replay a workload against a serving engine (vLLM, TensorRT-LLM, SGLang); compare systems
  kvbench hw                 detected hardware: CPUs, RAM, GPUs, disks, the cache directory's drive
  kvbench suite              the nine-scenario suite with trials, stored in the database
  kvbench report             median/P95 per scenario, tier comparison; --compare A B for two systems
  kvbench history            stored trials, suites and systems
  kvbench export             trials to CSV, XLSX or JSON; the report's table as CSV (--content report)
  kvbench import FILE...     results JSON of the reference benchmark (or kvbench) into the database
  kvbench recover --out NEW  what a damaged database still holds, written to a new, healthy one
  kvbench merge FILE...      one result from the ranks of a multi-host run (see docs/multi-host.md)
  kvbench serve              the app in a browser, for headless servers (loopback, token-protected)
  kvbench app                the desktop app (Electron; needs its binary and npm run build)
  kvbench --version          print the version
  kvbench --help             this text

Exit codes: 0 complete; 1 invalid input or failed run; 3 partial results (disk full, storage error);
130 interrupted by SIGINT, 143 by SIGTERM, 129 by SIGHUP (a dropped SSH session; partial results
are still written); 141 the reader of the output went away (kvbench report | head; files asked for
are still written; a run, suite or server still at work stops as on SIGTERM).
`;

/** The kvbench command line. Returns the process exit code. Each command's code loads only when it runs. */
export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'run':
      return (await import('./run-command.ts')).runCommand(rest);
    case 'probe':
      return (await import('./probe-command.ts')).probeCommand(rest);
    case 'workload':
      return (await import('./workload-command.ts')).workloadCommand(rest);
    case 'endpoint':
      return (await import('./endpoint-command.ts')).endpointCommand(rest);
    case 'hw':
      return (await import('./hw-command.ts')).hwCommand(rest);
    case 'suite':
      return (await import('./suite-command.ts')).suiteCommand(rest);
    case 'report':
      return (await import('./report-command.ts')).reportCommand(rest);
    case 'history':
      return (await import('./history-command.ts')).historyCommand(rest);
    case 'export':
      return (await import('./export-command.ts')).exportCommand(rest);
    case 'import':
      return (await import('./import-command.ts')).importCommand(rest);
    case 'recover':
      return (await import('./recover-command.ts')).recoverCommand(rest);
    case 'merge':
      return (await import('./merge-command.ts')).mergeCommand(rest);
    case 'serve':
      return (await import('./serve-command.ts')).serveCommand(rest);
    case 'app':
      return (await import('../app/launch-electron.ts')).appCommand(rest);
    case '--version':
    case '-V':
      process.stdout.write(`${KVBENCH_VERSION}\n`);
      return 0;
    case undefined:
    case '--help':
    case '-h':
    case 'help':
      process.stdout.write(USAGE);
      return 0;
    default:
      process.stderr.write(`kvbench: unknown command '${command}'\n\n${USAGE}`);
      return 1;
  }
}
