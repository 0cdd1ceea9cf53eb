import type { DatasetName } from "../lib/datasets";
import { median } from "../lib/stats";
import type { Metric } from "../lib/types";
import { TERM } from "./p5-search-loader";
import { datasetLabel, namedNote, runGridWorker } from "./grid-worker";

/**
 * P5b: the sidebar's facet counts for every attribute, with the term and two values of the first attribute applied,
 * on the 1M project: what a project page pays for its filters right after a write (the counts are kept per version,
 * so a second view of the same version costs nothing; the worker gives each call a new version). Baseline: the same
 * GROUP BY statements run bare, one after another. p99 per round, ratio per round, median of the ratios.
 */
function facetCounts(id: string, dataset: DatasetName): Metric {
  return {
    id,
    title: `Facet counts for every attribute, "${TERM}" + two values applied, ${datasetLabel(dataset)}`,
    goal: "≤ 1.5× the bare GROUP BY SQL, p99 ≤ 100 ms",
    needs: [dataset],
    async run(ctx) {
      const out = await runGridWorker(ctx, await ctx.dataset(dataset), "facets", {
        rounds: ctx.rounds(5),
        batch: 20,
        warmup: 3,
        q: TERM,
        named: true,
      });
      const ratios = out.rounds.map((r) => r.a.p99 / r.b.p99);
      const ratio = median(ratios);
      const p99 = median(out.rounds.map((r) => r.a.p99));
      return {
        figure: ratio,
        unit: "×",
        absolute: { name: "facets p99", value: p99, unit: "ms" },
        checks: [
          { name: "ratio", value: ratio, unit: "×", goal: "≤ 1.5", pass: ratio <= 1.5, rounds: "ratio" },
          { name: "facets p99", value: p99, unit: "ms", goal: "≤ 100", pass: p99 <= 100, rounds: "facetsP99" },
        ],
        subject: { "facets p50 ms": median(out.rounds.map((r) => r.a.p50)), "facets p99 ms": p99 },
        baseline: {
          "bare GROUP BYs p50 ms": median(out.rounds.map((r) => r.b.p50)),
          "bare GROUP BYs p99 ms": median(out.rounds.map((r) => r.b.p99)),
        },
        rounds: out.rounds.length,
        perRound: { ratio: ratios, facetsP99: out.rounds.map((r) => r.a.p99) },
        notes: namedNote(out),
        details: { plans: out.plans },
      };
    },
  };
}

export const p5b = facetCounts("P5b", "sqlite-1m");
export const p5bPg = facetCounts("P5b-pg", "pg-1m");
