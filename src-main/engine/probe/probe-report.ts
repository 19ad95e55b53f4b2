// The probe's result as text for a terminal. Decimal GB/s (10⁹ bytes/s), as fio and the KVBENCH
// section of `kvbench run` print them.

import type { ProbePhaseResult, ProbeResult } from './probe-protocol.ts';

const GIB = 1024 ** 3;
const MIB = 1024 ** 2;

function gbps(bytesPerSec: number): string {
  return `${(bytesPerSec / 1e9).toFixed(2)} GB/s`;
}

function msOf(ns: number): string {
  return `${(ns / 1e6).toFixed(1)} ms`;
}

function phaseLines(p: ProbePhaseResult): string[] {
  const lines = [
    `  ${p.op.padEnd(5)} ${gbps(p.bytes_per_sec).padStart(11)}   ${(p.bytes / GIB).toFixed(2)} GiB in ${(p.elapsed_ns / 1e9).toFixed(2)} s, ` +
      `${p.ios} I/Os; per I/O P50 ${msOf(p.io_latency.p50_ns)}, P99 ${msOf(p.io_latency.p99_ns)}; ` +
      `CPU ${p.cpu_seconds_per_gb.toFixed(3)} s/GB${p.cancelled ? ' (cancelled)' : ''}`,
  ];
  if (p.fdatasync_ns !== null) lines.push(`        closing fdatasync of every file: ${msOf(p.fdatasync_ns)} (inside the phase)`);
  if (p.device !== null) {
    const moved = p.op === 'read' ? p.device.read_bytes : p.device.write_bytes;
    lines.push(
      `        device ${p.device.name}: ${p.op === 'read' ? 'read' : 'wrote'} ${(moved / GIB).toFixed(2)} GiB ` +
        `(${p.device_coverage === null ? 'n/a' : `${(p.device_coverage * 100).toFixed(1)} %`} of the probe's bytes), ` +
        `busy ${(p.device.utilisation * 100).toFixed(0)} % of the phase`,
    );
  }
  // Results written before the per-process count existed have no such field.
  if (p.process_read_coverage != null) {
    lines.push(`        this process made the block layer read ${(p.process_read_coverage * 100).toFixed(1)} % of the probe's bytes (/proc/self/io)`);
  }
  if (p.page_cache_suspected) lines.push('        FLAGGED: reads may have been served above the device (page cache); this may not be the device\'s rate');
  return lines;
}

export function formatProbeReport(r: ProbeResult): string {
  const out: string[] = [];
  out.push(`kvbench probe: raw sequential limit of ${r.dir}`);
  const dev = r.device
    ? `${r.device.name} (${r.device.majorMinor}${r.device.isPartition && r.device.parent ? `, partition of ${r.device.parent.name}` : ''}` +
      `${r.device.rotational === null ? '' : r.device.rotational ? ', rotational' : ', non-rotational'})`
    : `unknown (${r.device_reason ?? 'no device counters'})`;
  out.push(`  device: ${dev}`);
  out.push(
    `  ${r.lanes} lanes × 1 I/O in flight of ${r.io_chunk_bytes / MIB} MiB (--io-depth ${r.io_depth}, --io-chunk-mib ${r.io_chunk_bytes / MIB}), ` +
      `files ${r.lanes} × ${(r.file_bytes_per_lane / MIB).toFixed(0)} MiB, ` +
      `direct I/O ${r.direct_io ? 'on' : `off (${r.direct_io_reason})`}, UV_THREADPOOL_SIZE ${r.uv_threadpool_size ?? 'default (4)'}`,
  );
  out.push('');
  for (const name of ['write', 'read'] as const) {
    const p = r.phases[name];
    if (p) out.push(...phaseLines(p));
  }
  if (r.warnings.length > 0) {
    out.push('');
    for (const w of r.warnings) out.push(`  warning: ${w}`);
  }
  out.push('');
  out.push(`  status: ${r.status}. GB = 10^9 bytes, GiB = 1024^3 bytes. CPU counts the probe process (all threads).`);
  return `${out.join('\n')}\n`;
}
