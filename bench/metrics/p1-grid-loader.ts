import type { DatasetName } from "../lib/datasets";
import { median } from "../lib/stats";
import type { Metric } from "../lib/types";
import { datasetLabel, namedNote, runGridWorker } from "./grid-worker";

/**
 * P1: the grid loader for the first page of 100 cards (page + total + version, through the models and
 * Kysely) against the bare keyset SELECT of the same page (the same SQL, no Kysely). p50 per round of 1,000 calls a
 * side, ratio per round, median of the ratios; the loader's p99 (the 11th slowest of a round, by nearest rank) where a goal names it.
 */
function gridLoaderFirstPage(id: string, dataset: DatasetName, goal: { ratio: number; p99Ms?: number } = { ratio: 2.5 }): Metric {
  return {
    id,
    title: `Grid loader p50, first page of 100 cards, ${datasetLabel(dataset)}`,
    goal: `≤ ${goal.ratio}× the bare keyset SELECT${goal.p99Ms ? `, loader p99 ≤ ${goal.p99Ms} ms` : ""}`,
    needs: [dataset],
    async run(ctx) {
      const ds = await ctx.dataset(dataset);
      const out = await runGridWorker(ctx, ds, "first", { rounds: ctx.rounds(9), batch: 1000, warmup: 50, named: true });
      const ratios = out.rounds.map((r) => r.a.p50 / r.b.p50);
      const ratio = median(ratios);
      const loaderP50 = median(out.rounds.map((r) => r.a.p50));
      const bareP50 = median(out.rounds.map((r) => r.b.p50));
      const loaderP99 = median(out.rounds.map((r) => r.a.p99));
      const { scopeMs, pageMs, totalMs } = out.breakdown;
      return {
        figure: ratio,
        unit: "×",
        absolute: { name: "loader p50", value: loaderP50, unit: "ms" },
        checks: [
          { name: "ratio", value: ratio, unit: "×", goal: `≤ ${goal.ratio}`, pass: ratio <= goal.ratio, rounds: "ratio" },
          ...(goal.p99Ms
            ? [
                {
                  name: "loader p99",
                  value: loaderP99,
                  unit: "ms",
                  goal: `≤ ${goal.p99Ms}`,
                  pass: loaderP99 <= goal.p99Ms,
                  rounds: "loaderP99",
                },
              ]
            : []),
        ],
        subject: { "loader p50 ms": loaderP50, "loader p99 ms": loaderP99 },
        baseline: { "bare SELECT p50 ms": bareP50 },
        rounds: out.rounds.length,
        perRound: { ratio: ratios, loaderP99: out.rounds.map((r) => r.a.p99) },
        notes: [
          `Each call alone (p50): scope ${scopeMs.toFixed(2)} ms, page ${pageMs.toFixed(2)} ms, total (count) ${totalMs.toFixed(2)} ms; ` +
            `the bare page SELECT ${bareP50.toFixed(2)} ms.`,
          ...namedNote(out),
        ],
        details: { bareSql: out.bareSql, plans: out.plans, breakdown: out.breakdown },
      };
    },
  };
}

export const p1 = gridLoaderFirstPage("P1", "sqlite-100k");
export const p1Pg = gridLoaderFirstPage("P1-pg", "pg-100k");
export const p1Pg1m = gridLoaderFirstPage("P1-pg-1m", "pg-1m", { ratio: 2.5, p99Ms: 10 });
