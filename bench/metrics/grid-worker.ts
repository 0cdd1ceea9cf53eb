import { runDatasetWorker } from "../lib/worker";
import type { Dataset } from "../lib/datasets";
import type { Summary } from "../lib/stats";
import type { Context } from "../lib/types";

export interface GridWorkerOutput {
  dialect: "sqlite" | "postgres";
  /** Calls per side per round actually made (capped to about 4 s per side). */
  batch: number;
  /** Warm-up calls made per side (at least 10,000, unless 20 s ran out first). */
  warmupCalls: { a: number; b: number };
  /** Per round: A and B summaries in ms (see workers/grid-loader.ts for what A and B are in each mode). */
  rounds: { a: Summary; b: Summary }[];
  /** PostgreSQL (not deep): the bare statements as named prepared statements, for reference; null otherwise. */
  bareNamed: Summary | null;
  /** p50 of each model call alone, in ms. */
  breakdown: { scopeMs: number; pageMs: number; totalMs: number };
  plans: { sql: string; plan: string }[];
  bareSql: string;
}

/** Runs workers/grid-loader.ts on a dataset, pinned to the server core, and returns its measurements. */
export async function runGridWorker(
  ctx: Context,
  ds: Dataset,
  mode: "first" | "deep" | "search" | "facets",
  opts: { rounds: number; batch: number; warmup: number; q?: string; named?: boolean },
): Promise<GridWorkerOutput> {
  return runDatasetWorker<GridWorkerOutput>(ctx, ds, "grid-loader.ts", { mode, ...opts, projectId: ds.projectId, email: ds.email });
}

export const datasetLabel = (name: string) =>
  ({
    "sqlite-100k": "100k project, SQLite",
    "pg-100k": "100k project, PostgreSQL",
    "sqlite-1m": "1M project, SQLite",
    "pg-1m": "1M project, PostgreSQL",
    "pg-10m": "10M project, PostgreSQL",
  })[name] ?? name;

/**
 * PostgreSQL: the bare side's statements as named prepared statements, beside the ratio's unnamed ones. Koala sends
 * its statements unnamed (docs/perf/postgres.md, Prepared statements), so the ratio is taken against unnamed ones.
 */
export const namedNote = (out: GridWorkerOutput): string[] =>
  out.bareNamed
    ? [
        `The bare statements named instead (parsed once, a generic plan from the sixth run if PostgreSQL takes one; not the ratio's baseline, Koala never names its statements), ` +
          `${out.bareNamed.n} calls timed once after the rounds: p50 ${out.bareNamed.p50.toFixed(2)} ms, p99 ${out.bareNamed.p99.toFixed(2)} ms.`,
      ]
    : [];
