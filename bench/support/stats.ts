/** Latency samples and their summaries, in milliseconds. */

export type LatencySummary = { count: number; p50: number; p99: number; mean: number };

/** Nearest-rank percentile of samples (p in 0..100); NaN for no samples. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] as number;
}

export function summarise(samples: readonly number[]): LatencySummary {
  const mean = samples.length
    ? samples.reduce((sum, x) => sum + x, 0) / samples.length
    : Number.NaN;
  return {
    count: samples.length,
    p50: round(percentile(samples, 50)),
    p99: round(percentile(samples, 99)),
    mean: round(mean),
  };
}

/** Three significant decimals are more than the noise of a shared 2-core machine allows. */
export function round(value: number, digits = 3): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

/** Runs `fn` and appends its duration to `samples`. */
export async function timed<T>(samples: number[], fn: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const value = await fn();
  samples.push(performance.now() - started);
  return value;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs `clients` loops of `fn` side by side until `durationMs` has passed and
 * returns every call's latency and the wall time of the whole run.
 */
export async function closedLoop(
  clients: number,
  durationMs: number,
  fn: (client: number) => Promise<void>,
): Promise<{ samples: number[]; elapsedMs: number }> {
  const samples: number[] = [];
  const started = performance.now();
  const deadline = started + durationMs;
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      while (performance.now() < deadline) await timed(samples, () => fn(client));
    }),
  );
  return { samples, elapsedMs: performance.now() - started };
}

/** Runs `total` calls of `fn` spread over `clients` concurrent loops. */
export async function closedLoopCount(
  clients: number,
  total: number,
  fn: (client: number, index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      while (next < total) await fn(client, next++);
    }),
  );
}
