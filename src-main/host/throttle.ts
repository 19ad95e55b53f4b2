// Leading- and trailing-edge throttle, used at both ends of the engine protocol for progress:
// the first value goes out at once, later ones at most once per interval, and the latest value
// is never lost (a trailing emit, or flush() before the result).

export interface Throttle<T> {
  push(value: T): void;
  /** Emit the pending value now, if any (even inside the interval). */
  flush(): void;
  /** Drop the pending value and stop the timer. */
  cancel(): void;
}

export function createThrottle<T>(
  emit: (value: T) => void,
  intervalMs: number,
  nowMs: () => number = () => performance.now(),
): Throttle<T> {
  let lastEmitMs = -Infinity;
  let pending: { value: T } | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const fire = (): void => {
    clearTimeout(timer);
    timer = undefined;
    if (pending === undefined) return;
    const { value } = pending;
    pending = undefined;
    lastEmitMs = nowMs();
    emit(value);
  };

  return {
    push(value) {
      pending = { value };
      if (timer !== undefined) return; // the trailing emit will carry it
      const waitMs = lastEmitMs + intervalMs - nowMs();
      if (waitMs <= 0) fire();
      else timer = setTimeout(fire, waitMs);
    },
    flush: fire,
    cancel() {
      clearTimeout(timer);
      timer = undefined;
      pending = undefined;
    },
  };
}
