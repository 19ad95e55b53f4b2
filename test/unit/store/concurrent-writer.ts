// Run as a separate process by store.test.ts: opens the database given in argv[2] and writes
// argv[3] trials into the suite and run given in argv[4], argv[5], one transaction each.
import { openStore } from '../../../src-main/store/open-store.ts';
import { currentProcess } from '../../../src-main/util/process-identity.ts';

const [file, countArg, suiteArg, runArg, systemId] = process.argv.slice(2);
const store = openStore(file);
const runner = currentProcess();
for (let i = 0; i < Number(countArg); i++) {
  const id = store.startTrial({
    runId: Number(runArg), suiteId: Number(suiteArg), systemId, driveId: null, hardwareSnapshotId: null, scenarioId: 'storage-only',
    trialIndex: 1000 + i, options: { model: 'tiny-1b' }, configKey: 'k', runner, cacheDir: null,
  });
  store.finishTrial(id, { status: 'complete', reason: null, wallMs: 1, metrics: { wall_clock_throughput_tok_per_s: i } });
}
store.close();
process.stdout.write('done\n');
