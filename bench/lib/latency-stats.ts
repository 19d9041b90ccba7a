/** Latency sampling for micro-benchmarks: warm-up, then timed calls with process.hrtime.bigint. */

/** Nearest-rank percentile of ascending-sorted samples (p in 0–100). */
export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export interface LatencySummary {
  samples: number;
  p50: number;
  p99: number;
  mean: number;
}

/**
 * Times `run(i)` one call at a time (µs per call) after `warmup` untimed calls, until
 * `maxIterations` calls or `budgetMs` of wall time, whichever comes first (at least `minIterations`).
 */
export function measure(
  run: (i: number) => unknown,
  options: { warmup: number; minIterations: number; maxIterations: number; budgetMs: number },
): LatencySummary {
  let sink = 0;
  for (let i = 0; i < options.warmup; i++) sink ^= run(i) === undefined ? 0 : 1;
  const samples = new Float64Array(options.maxIterations);
  const deadline = process.hrtime.bigint() + BigInt(Math.round(options.budgetMs * 1e6));
  let n = 0;
  while (n < options.maxIterations) {
    const start = process.hrtime.bigint();
    sink ^= run(n) === undefined ? 0 : 1;
    const end = process.hrtime.bigint();
    samples[n++] = Number(end - start) / 1000;
    if (n >= options.minIterations && end > deadline) break;
  }
  const sorted = samples.subarray(0, n).sort();
  let total = 0;
  for (const s of sorted) total += s;
  if (sink === 42) console.log("");
  return { samples: n, p50: percentile(sorted, 50), p99: percentile(sorted, 99), mean: total / n };
}

/** Formats a number of µs for a table cell. */
export function us(value: number): string {
  if (value >= 10_000) return `${(value / 1000).toFixed(1)} ms`;
  if (value >= 100) return value.toFixed(0);
  return value.toFixed(value >= 10 ? 1 : 2);
}

let gc: (() => void) | null | undefined;

/**
 * A full garbage collection between measured phases, so one phase's garbage is not collected
 * on the next one's clock. Uses V8's own `gc` (enabled at run time; a no-op if unavailable).
 */
export async function collectGarbage(): Promise<void> {
  if (gc === undefined) {
    try {
      const v8 = await import("node:v8");
      const vm = await import("node:vm");
      v8.setFlagsFromString("--expose-gc");
      gc = vm.runInNewContext("gc") as () => void;
    } catch {
      gc = null;
    }
  }
  gc?.();
}
