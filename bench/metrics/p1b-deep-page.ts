import type { DatasetName } from "../lib/datasets";
import { median } from "../lib/stats";
import type { Metric } from "../lib/types";
import { datasetLabel, runGridWorker } from "./grid-worker";

/**
 * P1b: the grid loader's p99 for page 1000 (1-based; 99,900 cards deep, reached by its keyset cursor) over its
 * p99 for the first page. Keyset paging should cost the same at any depth.
 */
function gridLoaderDeepPage(id: string, dataset: DatasetName, opts: { rounds: number; batch: number }): Metric {
  return {
    id,
    title: `Grid loader p99, page 1000 ÷ first page, ${datasetLabel(dataset)}`,
    goal: "≤ 1.2",
    needs: [dataset],
    async run(ctx) {
      const ds = await ctx.dataset(dataset);
      const out = await runGridWorker(ctx, ds, "deep", { rounds: ctx.rounds(opts.rounds), batch: opts.batch, warmup: 20 });
      const ratios = out.rounds.map((r) => r.a.p99 / r.b.p99);
      const ratio = median(ratios);
      const deepP99 = median(out.rounds.map((r) => r.a.p99));
      return {
        figure: ratio,
        unit: "×",
        absolute: { name: "page 1000 p99", value: deepP99, unit: "ms" },
        checks: [{ name: "ratio", value: ratio, unit: "×", goal: "≤ 1.2", pass: ratio <= 1.2, rounds: "ratio" }],
        subject: { "page 1000 p50 ms": median(out.rounds.map((r) => r.a.p50)), "page 1000 p99 ms": deepP99 },
        baseline: {
          "first page p50 ms": median(out.rounds.map((r) => r.b.p50)),
          "first page p99 ms": median(out.rounds.map((r) => r.b.p99)),
        },
        rounds: out.rounds.length,
        perRound: { ratio: ratios },
        notes: [
          `p99 over ${out.batch} loader calls per side per round (${out.batch >= 1000 ? "the 11th slowest" : out.batch >= 200 ? "among the few slowest" : "the slowest"}): a tail figure, noisier than the p50s beside it; see perRound for the spread.`,
        ],
        details: { plans: out.plans, breakdown: out.breakdown },
      };
    },
  };
}

export const p1b = gridLoaderDeepPage("P1b", "sqlite-100k", { rounds: 9, batch: 1000 });
export const p1bPg = gridLoaderDeepPage("P1b-pg", "pg-100k", { rounds: 9, batch: 1000 });
export const p1b1m = gridLoaderDeepPage("P1b-1m", "sqlite-1m", { rounds: 9, batch: 1000 });
export const p1bPg1m = gridLoaderDeepPage("P1b-pg-1m", "pg-1m", { rounds: 9, batch: 1000 });
