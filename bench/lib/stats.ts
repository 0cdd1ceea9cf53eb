/** Small statistics for benchmark samples. Percentiles use the nearest-rank method on a sorted copy. */
export function percentile(samples: number[], p: number): number {
  if (!samples.length) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export const median = (samples: number[]) => percentile(samples, 50);
export const mean = (samples: number[]) => samples.reduce((a, b) => a + b, 0) / samples.length;

export interface Summary {
  n: number;
  min: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

export function summarise(samples: number[]): Summary {
  return {
    n: samples.length,
    min: Math.min(...samples),
    p50: percentile(samples, 50),
    p90: percentile(samples, 90),
    p99: percentile(samples, 99),
    max: Math.max(...samples),
    mean: mean(samples),
  };
}

/** Rounds a figure for reports: 3 significant digits, at least 2 decimals below 10. */
export function round(value: number, digits = 3): number {
  if (!Number.isFinite(value) || value === 0) return value;
  const scale = 10 ** Math.max(0, digits - 1 - Math.floor(Math.log10(Math.abs(value))));
  return Math.round(value * scale) / scale;
}
