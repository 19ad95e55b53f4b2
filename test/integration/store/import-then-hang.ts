// Run as a separate process by import-killed.test.ts: imports the files given after the database
// (argv[2]) in batches of argv[3] files, says `staged N` on stdout after each batch, and after the
// batch that reaches argv[4] files waits, never finishing, for the test to kill it there.
import { importResultsFiles } from '../../../src-main/store/import-results.ts';
import { openStore } from '../../../src-main/store/open-store.ts';

const [db, batchArg, hangAtArg, ...files] = process.argv.slice(2);
const store = openStore(db);
await importResultsFiles(store, files, {
  systemLabel: 'lab',
  driveLabel: 'nvme0',
  batchFiles: Number(batchArg),
  afterBatch: async (b) => {
    process.stdout.write(`staged ${b.done}\n`);
    if (b.done >= Number(hangAtArg)) await new Promise(() => setInterval(() => undefined, 60_000));
  },
});
process.stdout.write('finished\n');
store.close();
