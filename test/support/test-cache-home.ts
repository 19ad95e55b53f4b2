// Every test process (and the kvbench processes tests start, which inherit its environment) keeps
// kvbench's cache files in a cache directory of the tests' own, never the user's: the record of
// database files found sound (src-main/store/sound-file-record.ts) would otherwise gather the tests'
// temporary databases in ~/.cache/kvbench. One fixed directory for all runs, as a cache is meant to be
// kept, so that Node's compile cache there stays warm from run to run. Tests that set XDG_CACHE_HOME
// themselves (ownSoundRecord, the compile-cache tests) still do.
import { tmpdir } from 'node:os';
import { join } from 'node:path';

process.env.XDG_CACHE_HOME = join(tmpdir(), 'kvbench-test-cache-home');
