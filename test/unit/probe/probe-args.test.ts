import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_RUN_OPTIONS } from '../../../src-shared/domain/run-options.ts';
import { parseProbeArgs } from '../../../src-main/cli/probe-command.ts';
import { formatProbeReport } from '../../../src-main/engine/probe/probe-report.ts';
import { defaultProbeBytes, laneFileBytes } from '../../../src-main/engine/probe/raw-limit-probe.ts';
import { ProbeToHostSchema, type ProbeResult } from '../../../src-main/engine/probe/probe-protocol.ts';
import { validateProbeOptions } from '../../../src-main/engine/probe/probe-options.ts';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kvb-probe-args-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
const MIB = 1024 * 1024;

describe('parseProbeArgs', () => {
  it('defaults to the engine’s block size and I/Os in flight', () => {
    const r = parseProbeArgs(['--dir', tmp]);
    expect(r).toMatchObject({ ok: true, output: null, json: false });
    if (r.ok !== true) return;
    expect(r.options).toEqual({
      dir: tmp,
      ioChunkMib: DEFAULT_RUN_OPTIONS.ioChunkMib,
      ioDepth: DEFAULT_RUN_OPTIONS.ioDepth,
      durationS: 10,
      sizeBytes: null,
      directIo: 'auto',
      phases: ['write', 'read'],
    });
  });

  it('takes every flag, resolving paths against the working directory', () => {
    const r = parseProbeArgs(
      ['--dir', '.', '--io-chunk-mib', '4', '--io-depth', '8', '--duration', '2.5', '--size-gib', '0.5', '--direct-io', 'on', '--only', 'read', '--output', 'p.json', '--json'],
      tmp,
    );
    expect(r).toMatchObject({
      ok: true,
      json: true,
      output: path.join(tmp, 'p.json'),
      options: { dir: tmp, ioChunkMib: 4, ioDepth: 8, durationS: 2.5, sizeBytes: 512 * MIB, directIo: 'on', phases: ['read'] },
    });
  });

  it('collects every problem', () => {
    const r = parseProbeArgs(['--io-depth', '0', '--io-chunk-mib', 'x', '--only', 'both', '--direct-io', 'maybe']);
    expect(r.ok).toBe(false);
    if (r.ok !== false) return;
    expect(r.errors.join('\n')).toMatch(/--io-chunk-mib takes a number, got /);
    expect(r.errors.join('\n')).toMatch(/--only must be write or read/);
  });

  it('says a bad --only once, in its own words (not again as zod\'s "Invalid option" line; review rev13 #12)', () => {
    for (const bad of ['bogus', '']) {
      expect(parseProbeArgs(['--dir', tmp, '--only', bad])).toEqual({ ok: false, errors: [`--only must be write or read (got '${bad}')`] });
    }
  });

  it('refuses a missing --dir, bad ranges and unknown flags', () => {
    const noDir = parseProbeArgs([]);
    expect(noDir.ok === false && noDir.errors.join()).toMatch(/--dir is required/);
    const range = parseProbeArgs(['--dir', tmp, '--io-depth', '0', '--duration=-1', '--direct-io', 'maybe']);
    expect(range.ok === false && range.errors.join('\n')).toMatch(/--io-depth must be between 1 and/);
    expect(range.ok === false && range.errors.join('\n')).toMatch(/--duration must be between/);
    expect(range.ok === false && range.errors.join('\n')).toMatch(/--direct-io must be auto, on or off/);
    const unknown = parseProbeArgs(['--dir', tmp, '--bogus']);
    expect(unknown.ok === false && unknown.errors.join()).toMatch(/bogus/);
    const out = parseProbeArgs(['--dir', tmp, '--output', path.join(tmp, 'missing', 'p.json')]);
    expect(out.ok === false && out.errors.join()).toMatch(/cannot write/);
  });

  it('refuses a --dir that does not exist or is not a directory with the other argument errors, not from the probe process', () => {
    // Both were the probe's "failed (TARGET_NOT_WRITABLE): cannot use --dir …: ENOENT … stat" after it started.
    const missing = path.join(tmp, 'absent');
    const file = path.join(tmp, 'a-file');
    fs.writeFileSync(file, 'x');
    const absent = parseProbeArgs(['--dir', missing, '--io-depth', '0']);
    expect(absent.ok === false && absent.errors).toEqual(expect.arrayContaining([`--dir does not exist: ${missing}`, expect.stringMatching(/--io-depth must be between/)]));
    const notDir = parseProbeArgs(['--dir', file]);
    expect(notDir.ok === false && notDir.errors).toEqual([`--dir is not a directory: ${file}`]);
    const under = parseProbeArgs(['--dir', path.join(file, 'sub')]);
    expect(under.ok === false && under.errors).toEqual([`--dir does not exist: ${path.join(file, 'sub')}`]);
  });

  it('answers --help', () => {
    expect(parseProbeArgs(['--help'])).toEqual({ ok: 'help' });
  });
});

describe('validateProbeOptions', () => {
  it('rejects unknown keys (options cross a process boundary)', () => {
    expect(validateProbeOptions({ dir: tmp, extra: 1 }).ok).toBe(false);
  });
});

describe('probe sizing', () => {
  it('splits the size over the lanes in whole chunks, at least one', () => {
    expect(laneFileBytes(1024 * MIB, 16, 16 * MIB)).toBe(64 * MIB);
    expect(laneFileBytes(1000 * MIB, 16, 16 * MIB)).toBe(48 * MIB);
    expect(laneFileBytes(1 * MIB, 16, 16 * MIB)).toBe(16 * MIB);
  });
  it('defaults to 20 % of the free space, at most 8 GiB', () => {
    expect(defaultProbeBytes(10 * 1024 * MIB)).toBe(2 * 1024 * MIB);
    expect(defaultProbeBytes(1e15)).toBe(8 * 1024 * MIB);
  });
});

describe('formatProbeReport', () => {
  const phase = (op: 'write' | 'read', flagged: boolean) => ({
    op,
    bytes: 10e9,
    ios: 600,
    elapsed_ns: 2e9,
    bytes_per_sec: 5e9,
    wraps: 0,
    io_latency: { count: 600, mean_ns: 5e7, p50_ns: 4e7, p95_ns: 8e7, p99_ns: 9e7, max_ns: 1e8 },
    fdatasync_ns: op === 'write' ? 2e6 : null,
    cpu_user_ns: 1e8,
    cpu_system_ns: 4e8,
    cpu_seconds_per_gb: 0.05,
    device: { name: 'nvme0n1', read_bytes: flagged ? 1e9 : 10e9, write_bytes: 10e9, read_ios: 1, write_ios: 1, utilisation: 0.99 },
    device_coverage: flagged ? 0.1 : 1,
    process_read_coverage: op === 'read' ? (flagged ? 0.08 : 1) : null,
    page_cache_suspected: flagged,
    page_cache_reason: flagged ? 'buffered I/O: this process made the block layer read 8.0 % of …' : null,
    cancelled: false,
  });
  const result: ProbeResult = {
    kind: 'kvbench-probe',
    version: '0.1.0',
    status: 'complete',
    started_at: '2026-11-23T00:00:00.000Z',
    dir: '/mnt/nvme',
    device: { name: 'nvme0n1', majorMinor: '259:0', isPartition: false, parent: null, underlying: [], logicalBlockBytes: 512, rotational: false, resolvedVia: 'stat' },
    device_reason: null,
    direct_io: false,
    direct_io_reason: 'test',
    io_chunk_bytes: 16 * MIB,
    io_depth: 16,
    lanes: 16,
    file_bytes_per_lane: 64 * MIB,
    uv_threadpool_size: 20,
    phases: { write: phase('write', false), read: phase('read', true) },
    warnings: ['buffered I/O (test)'],
    units: 'bytes',
  };
  it('shows both phases in decimal GB/s, the device’s share, and flags page-cache reads', () => {
    const text = formatProbeReport(result);
    expect(text).toMatch(/write\s+5\.00 GB\/s/);
    expect(text).toMatch(/read\s+5\.00 GB\/s/);
    expect(text).toMatch(/device nvme0n1: read 0\.93 GiB \(10\.0 % of the probe's bytes\)/);
    expect(text).toMatch(/this process made the block layer read 8\.0 % of the probe's bytes \(\/proc\/self\/io\)/);
    expect(text).toMatch(/FLAGGED: reads may have been served above the device/);
    expect(text).toMatch(/warning: buffered I\/O/);
  });

  it('is what the host takes from the probe process, and nothing looser', () => {
    // review rev7 #9: the host checked kind, status and that phases was an object, then cast.
    expect(ProbeToHostSchema.safeParse({ type: 'result', result }).success).toBe(true);
    const broken = ProbeToHostSchema.safeParse({ type: 'result', result: { ...result, phases: { read: { op: 'read', bytes_per_sec: 'fast' } } } });
    expect(broken.success).toBe(false);
    expect(broken.error!.issues.map((i) => i.path.join('.'))).toContain('result.phases.read.bytes_per_sec');
    // Error codes come from the one closed set.
    expect(ProbeToHostSchema.safeParse({ type: 'error', error: { code: 'DISK_FULL', message: 'no space' } }).success).toBe(true);
    expect(ProbeToHostSchema.safeParse({ type: 'error', error: { code: 'EIO', message: 'i/o error' } }).success).toBe(false);
  });
});
