import type { Dataset, DatasetName } from "./datasets";

/** What a metric needs before it can run; the runner prepares or checks each one first. */
export type Need = "build" | DatasetName | "nginx" | "chromium";

/** One goal condition of a metric, e.g. "ratio ≤ 3" or "Cache-Control has immutable". */
export interface Check {
  name: string;
  value: number | boolean | null;
  unit?: string;
  /** The goal as written in the table, e.g. "≤ 3". */
  goal: string;
  pass: boolean;
  /** The key of `perRound` whose median this check's value is: the report prints its rounds' range beside it. */
  rounds?: string;
}

export interface MetricResult {
  /** The headline figure (usually the ratio to the baseline); the first check's value. */
  figure: number | null;
  unit: string;
  /** The measured side's own headline figure (ms, req/s, KiB), for the comparison between runs. */
  absolute?: { name: string; value: number; unit: string };
  /** Every goal condition; the metric passes when all pass. The first is the headline. */
  checks: Check[];
  /** Summaries of the measured side and the baseline (medians over rounds, in ms or req/s). */
  subject?: Record<string, number | string>;
  baseline?: Record<string, number | string>;
  rounds?: number;
  /** Per-round raw figures, so a reader can see the spread. */
  perRound?: Record<string, number[]>;
  notes?: string[];
  /** Anything else worth keeping (query plans, file lists). */
  details?: Record<string, unknown>;
}

export interface Metric {
  id: string;
  title: string;
  /** The goal as in the table. */
  goal: string;
  needs: Need[];
  /** Run only when named (`npm run bench -- P-10m`), never by a plain `npm run bench`: a measurement made once. */
  byNameOnly?: boolean;
  run(ctx: Context): Promise<MetricResult>;
}

export interface Context {
  /** Repository root (absolute). */
  root: string;
  /** bench/.cache (absolute). */
  cache: string;
  /** Cores for taskset: the server under test and the load generator; null when pinning is not possible. */
  cores: { server: string | null; load: string | null };
  /** Rounds override from --rounds (for quick trial runs); metrics pass their default. */
  rounds(defaultRounds: number): number;
  log(line: string): void;
  dataset(name: DatasetName): Promise<Dataset>;
  /** The production build, snapshotted under bench/.cache/app (build/server.js + build/server/). */
  appDir: string;
  /** A session cookie (`name=value`) for the dataset's bench user, signed in over HTTP once per run. */
  signIn(baseUrl: string, dataset: Dataset): Promise<string>;
}
