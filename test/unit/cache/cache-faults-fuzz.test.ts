// Random concurrent writes and reads through three tiers while the lower tiers' writes fail at
// random (a full disk, a failed copy): every operation must settle, with its data or with the
// injected error, every hit must return the bytes written, and once everything has settled the
// cache's books must match what the tiers hold. It found two bugs: a chained demotion that failed
// halfway left its entry marked as moving forever, with readers spinning on it (the engine hung in
// the suite); and with promotion on, a promotion waiting for room above was itself one of the moves
// that room waited for (a deadlock).
import { describe, expect, it } from 'vitest';
import { Rng } from '../../../src-main/engine/workload/rng.ts';
import { patternSource, threeTierCache } from '../../support/memory-tier.ts';

const KEYS = Array.from({ length: 60 }, (_, i) => i);
const sizeOf = (i: number): number => 40 + ((i * 37) % 200);
const ref = (i: number) => ({ key: `k${i}`, keyHash: BigInt(i + 1), sizeBytes: sizeOf(i) });

async function expectedBytes(i: number): Promise<Buffer> {
  const b = Buffer.alloc(sizeOf(i));
  await patternSource(i)({ index: 0, entryOffsetBytes: 0, buffer: b });
  return b;
}

// Interleavings depend on timers as well as on the seed, so many seeds run: 32 found the deadlock
// in every run before its fix.
const CASES = [
  ...[7, 11, 13, 17, 19, 23, 29, 31].map((n) => [n, 'none'] as const),
  ...Array.from({ length: 32 }, (_, k) => [100 + k, 'on-hit'] as const),
];

describe('MultiTierCache under random tier failures', () => {
  for (const [seed, promotion] of CASES) {
    it(`settles every operation and keeps its books (seed ${seed}, promotion ${promotion})`, async () => {
      const rng = new Rng(seed);
      const rand = (): number => rng.next();
      const { gpu, cpu, storage, cache } = threeTierCache({ gpu: 600, cpu: 900, storage: 3000 }, { promotion });
      cpu.delayMs = 1;
      storage.delayMs = 2;
      const backends = [gpu, cpu, storage];
      let hits = 0;
      let injected = 0;

      const client = async (): Promise<void> => {
        for (let n = 0; n < 40; n++) {
          if (rand() < 0.1) cpu.failWrites = rand() < 0.4 ? new Error('cpu tier failed') : null;
          if (rand() < 0.1) storage.failWrites = rand() < 0.4 ? new Error('storage failed') : null;
          const i = KEYS[Math.floor(rand() * KEYS.length)];
          if (rand() < 0.5) {
            try {
              await cache.write(ref(i), patternSource(i));
            } catch (err) {
              expect((err as Error).message).toMatch(/^(cpu tier failed|storage failed)$/);
              injected++;
            }
          } else {
            // Reads never fail here: only writes do, and a promotion's failed copy up is counted
            // (promotionFailures), not thrown at the read it follows.
            const seen: Buffer[] = [];
            const o = await cache.read(`k${i}`, 'user', () => async (c) => void seen.push(Buffer.from(c.buffer)));
            if (o.hit) {
              hits++;
              expect(Buffer.concat(seen), `bytes of k${i} read from ${o.tier}`).toEqual(await expectedBytes(i));
            }
          }
          await new Promise((r) => setImmediate(r));
        }
      };
      // Operations that wait on each other in a cycle never settle: say so instead of timing out.
      let stalled!: ReturnType<typeof setTimeout>;
      const stall = new Promise<never>((_, reject) => {
        stalled = setTimeout(() => reject(new Error('operations stopped settling: a cycle of moves waiting on each other')), 10_000);
      });
      try {
        await Promise.race([Promise.all(Array.from({ length: 12 }, client)).then(() => cache.idle()), stall]);
      } finally {
        clearTimeout(stalled);
      }

      // The run exercised both outcomes.
      expect(hits).toBeGreaterThan(20);
      expect(injected).toBeGreaterThan(0);
      // Books: each tier's used bytes and entry count are exactly those of the keys the cache
      // places there, and the tier itself holds exactly those keys.
      const usage = cache.usage();
      backends.forEach((backend, t) => {
        const here = KEYS.filter((i) => cache.tierOf(`k${i}`) === backend.name);
        expect(usage[t].usedBytes, `${backend.name} used bytes`).toBe(here.reduce((s, i) => s + sizeOf(i), 0));
        expect(usage[t].entries, `${backend.name} entries`).toBe(here.length);
        expect([...backend.entries.keys()].sort(), `${backend.name} holds`).toEqual(here.map((i) => `k${i}`).sort());
      });
      expect(usage[0].usedBytes).toBeLessThanOrEqual(600);
      expect(usage[1].usedBytes).toBeLessThanOrEqual(900);
      expect(usage[2].usedBytes).toBeLessThanOrEqual(3000);
      // And every entry still in the cache reads back intact (with promotion on, each read may push
      // another entry out of the cache, so presence is asked just before each read).
      cpu.failWrites = null;
      storage.failWrites = null;
      for (const i of KEYS) {
        await cache.idle();
        if (!cache.has(`k${i}`)) continue;
        const seen: Buffer[] = [];
        const o = await cache.read(`k${i}`, 'user', () => async (c) => void seen.push(Buffer.from(c.buffer)));
        expect(o.hit).toBe(true);
        expect(Buffer.concat(seen)).toEqual(await expectedBytes(i));
      }
    });
  }
});
