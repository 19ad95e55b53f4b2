// Several writers at once (preparing the storage tier before the measured window), stopped
// together: the first failure ends every loop, and is thrown only once none is still running.

/** `fn` over `items`, at most `limit` at a time; stops and throws as runLoops does. */
export async function runConcurrently<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await runLoops(Math.min(limit, items.length), async () => {
    if (next >= items.length) return false;
    await fn(items[next++]);
    return true;
  });
}

/**
 * Runs `count` loops of `step` until it returns false. The first failure stops every loop at its
 * next step and is thrown only once all have stopped, so nothing is still writing while the caller
 * cleans up (a loop left running would create files after the cleanup removed the others).
 */
export async function runLoops(count: number, step: () => Promise<boolean>): Promise<void> {
  let failure: { error: unknown } | null = null;
  await Promise.all(
    Array.from({ length: count }, async () => {
      try {
        while (failure === null && (await step()));
      } catch (error) {
        failure ??= { error };
      }
    }),
  );
  if (failure !== null) throw (failure as { error: unknown }).error;
}
