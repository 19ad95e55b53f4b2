// The CLI's live line shows the throughput a run stores (tokens ÷ the window so far), and names the
// last interval's rate beside it (review rev8-gui #5: the app's tile showed that rate alone, unnamed).
import { describe, expect, it } from 'vitest';
import { storageText, tokensPerSecText } from '../../../src-main/cli/progress-line.ts';
import type { ProgressEvent } from '../../../src-shared/engine-protocol.ts';

const event = (over: Partial<ProgressEvent>): ProgressEvent => ({
  phase: 'running', elapsedNs: 0, durationNs: 3e9, requestsCompleted: 0, generatedTokens: 0, storageReadBytes: 0, storageWriteBytes: 0, maxRequests: null, activeUsers: 4, queueDepth: 0, generatedTokensPerSec: 0,
  storageReadBytesPerSec: 0, storageWriteBytesPerSec: 0, cpuReadBytesPerSec: 0, cpuWriteBytesPerSec: 0, e2eLatencyP95Ns: null, storageReadP95Ns: null, eventLoopLagP99Ns: null, ...over,
});

describe('progress line', () => {
  it('tok/s is the running average over the window, the last second\'s rate named beside it', () => {
    expect(tokensPerSecText(event({ elapsedNs: 3e9, generatedTokens: 837, generatedTokensPerSec: 556 }))).toBe('tok/s 279 (last 1 s 556)');
    expect(tokensPerSecText(event({ elapsedNs: 0 }))).toBe('tok/s - (last 1 s 0)');
  });

  it('storage is the run-average over the window (the stored bandwidths), the last second\'s rates named beside it', () => {
    const p = event({ elapsedNs: 4e9, storageReadBytes: 6e9, storageWriteBytes: 1e9, storageReadBytesPerSec: 1e9, storageWriteBytesPerSec: 2e8 });
    expect(storageText(p)).toBe('storage R 1.50 GB/s W 0.25 GB/s (last 1 s R 1.00 GB/s W 0.20 GB/s)');
    expect(storageText(event({ elapsedNs: 0 }))).toBe('storage R - W - (last 1 s R 0.00 GB/s W 0.00 GB/s)');
  });
});
