import { describe, expect, it } from 'vitest';
import { bandwidthOf } from '../../../src-main/hardware/drive-probe.ts';
import type { ProbePhaseName } from '../../../src-main/engine/probe/probe-options.ts';
import type { ProbePhaseResult, ProbeResult } from '../../../src-main/engine/probe/probe-protocol.ts';

function phase(op: ProbePhaseName, bytesPerSec: number, over: Partial<ProbePhaseResult> = {}): ProbePhaseResult {
  const lat = { count: 10, mean_ns: 1, p50_ns: 1, p95_ns: 1, p99_ns: 1, max_ns: 1 };
  return {
    op, bytes: bytesPerSec * 3, ios: 10, elapsed_ns: 3e9, bytes_per_sec: bytesPerSec, wraps: 0, io_latency: lat, fdatasync_ns: null, cpu_user_ns: 0, cpu_system_ns: 0,
    cpu_seconds_per_gb: 0, device: null, device_coverage: null, process_read_coverage: null, page_cache_suspected: false, page_cache_reason: null, cancelled: false, ...over,
  };
}

function result(over: Partial<ProbeResult> = {}, read: Partial<ProbePhaseResult> = {}): ProbeResult {
  return {
    kind: 'kvbench-probe', version: '0.1.0', status: 'complete', started_at: '2026-11-01T00:00:00.000Z', dir: '/mnt/kv', device: null, device_reason: null,
    direct_io: false, direct_io_reason: 'tmpfs', io_chunk_bytes: 16 << 20, io_depth: 8, lanes: 2, file_bytes_per_lane: 1 << 30, uv_threadpool_size: 8,
    phases: { write: phase('write', 1.5e9), read: phase('read', 2e9, read) }, warnings: [], units: 'bytes', ...over,
  };
}

describe('the drive limit from the raw-limit probe', () => {
  it('a complete probe of the device gives both rates', () => {
    expect(bandwidthOf(result(), 3)).toMatchObject({ readBytesPerSec: 2e9, writeBytesPerSec: 1.5e9, pageCacheSuspected: false, fileBytes: 2 * 2 ** 30 });
  });

  it('a read phase the page cache may have served is no limit: null, and the flag is kept', () => {
    const b = bandwidthOf(result({}, { bytes_per_sec: 9e9, page_cache_suspected: true, page_cache_reason: 'the device read 3 % of the bytes' }), 3);
    expect(b).toMatchObject({ readBytesPerSec: null, writeBytesPerSec: 1.5e9, pageCacheSuspected: true });
  });

  it('a probe that did not complete, or a phase cut short or missing, gives no limit for it', () => {
    expect(bandwidthOf(result({ status: 'cancelled' }), 3)).toMatchObject({ readBytesPerSec: null, writeBytesPerSec: null });
    expect(bandwidthOf(result({}, { cancelled: true }), 3)).toMatchObject({ readBytesPerSec: null, writeBytesPerSec: 1.5e9 });
    expect(bandwidthOf(result({ phases: { write: phase('write', 1.5e9) } }), 3)).toMatchObject({ readBytesPerSec: null, writeBytesPerSec: 1.5e9 });
  });
});
