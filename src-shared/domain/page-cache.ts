// The one rule for whether a run's storage reads were the device's or the page cache's. The engine
// judges its own run with it (results' kvbench.device_io.flagged), the probe its read phase, and a
// report the trials whose file carried no verdict (the reference's, or ones stored before the
// verdict was kept), from the coverages stored with them.
import { MIN_DEVICE_READ_COVERAGE } from './results.ts';

export interface DeviceReadCoverage {
  /** The block device's name, where known (a stored trial keeps only the ratios). */
  device: string | null;
  /** device read bytes ÷ storage-tier read bytes (null when the tier read nothing). */
  readCoverage: number | null;
  /** this process's block-layer read bytes ÷ storage-tier read bytes (null when unknown). */
  processReadCoverage: number | null;
  /** Why the process's own count is missing, where known. */
  processReason: string | null;
}

export interface PageCacheFacts {
  /** null: not known (a stored trial from before kvbench kept the I/O mode). */
  directIo: boolean | null;
  /** Bytes the storage tier reported reading; null when only the coverages are known (it read some). */
  storageReadBytes: number | null;
  /** null: no device counters. */
  counters: DeviceReadCoverage | null;
  /** Why there were no device counters. */
  unavailableReason: string | null;
}

export interface PageCacheVerdict {
  /** True when the storage reads were (at least partly) not, or not provably, served by the device. */
  flagged: boolean;
  reason: string | null;
}

const pctOf = (ratio: number): string => (ratio * 100).toFixed(1);

/**
 * Reads are flagged when
 * - the device read less than MIN_DEVICE_READ_COVERAGE of what the storage tier says it read: a
 *   cache above the device served the rest (with direct I/O too: a cache below the filesystem, or
 *   the wrong device's counters);
 * - the I/O was buffered, unless this process's own count shows it made the device read at least
 *   that share. The device's counters cannot clear a buffered run: they include every process's
 *   I/O, so another reader on the same drive would hide page-cache hits. Without counters at all,
 *   buffered reads are flagged; direct reads bypass the page cache by construction.
 * Device coverage above 1 is normal (other processes, metadata, read-ahead) and never flagged.
 */
export function assessPageCache(f: PageCacheFacts): PageCacheVerdict {
  const reads = f.storageReadBytes === null || f.storageReadBytes > 0;
  const bufferedReads = f.directIo === false && reads;
  const clean: PageCacheVerdict = { flagged: false, reason: null };
  if (f.counters === null) {
    if (!bufferedReads) return clean;
    const why = f.unavailableReason === null ? '' : ` (${f.unavailableReason})`;
    return { flagged: true, reason: `buffered I/O and no device counters${why}: reads may have been served by the page cache` };
  }
  const { readCoverage, processReadCoverage } = f.counters;
  const theDevice = f.counters.device === null ? 'the device' : `the device (${f.counters.device})`;
  const ofTier = `of the ${f.storageReadBytes === null ? '' : `${f.storageReadBytes} `}bytes the storage tier reported reading`;
  if (readCoverage !== null && readCoverage < MIN_DEVICE_READ_COVERAGE) {
    const why =
      f.directIo === true
        ? 'although direct I/O was on (a cache below the filesystem, or counters of the wrong device?)'
        : `${f.directIo === false ? 'buffered I/O: ' : ''}the page cache served the rest`;
    return { flagged: true, reason: `${theDevice} read ${pctOf(readCoverage)} % ${ofTier}, ${why}` };
  }
  if (f.directIo === true || !reads) return clean;
  if (processReadCoverage !== null && processReadCoverage < MIN_DEVICE_READ_COVERAGE) {
    const mode = f.directIo === false ? 'buffered I/O: ' : '';
    return { flagged: true, reason: `${mode}this process made the block layer read ${pctOf(processReadCoverage)} % ${ofTier} (/proc/self/io); the page cache served the rest` };
  }
  if (processReadCoverage === null && bufferedReads) {
    const device = readCoverage === null ? theDevice : `${theDevice} read ${pctOf(readCoverage)} % ${ofTier}, but its counters`;
    return {
      flagged: true,
      reason:
        `buffered I/O: ${device} include every process's I/O ` +
        `and this process's own count is unavailable (${f.counters.processReason ?? 'unknown'}): reads may have been served by the page cache`,
    };
  }
  return clean;
}
