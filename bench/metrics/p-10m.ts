import { median } from "../lib/stats";
import type { Metric } from "../lib/types";
import { runGridWorker } from "./grid-worker";
import { TERM } from "./p5-search-loader";

/**
 * P-10m: how PostgreSQL's grid grows from 1M images to 10M. P1 (first page), P1b (page 1000), P5 (the search) and
 * P5b (facet counts with the search) measured on the 1M and the 10M project in one run, the same workers and rounds
 * as those metrics; each figure is the 10M p99 over the 1M p99. Run once, by name (the 10M project takes most of an
 * hour to build and about 19 GB).
 */
const STEPS = [
  { name: "first page", mode: "first", opts: { batch: 200, warmup: 50 } },
  { name: "page 1000", mode: "deep", opts: { batch: 1000, warmup: 20 } },
  { name: "search", mode: "search", opts: { batch: 200, warmup: 50, q: TERM } },
  { name: "facets", mode: "facets", opts: { batch: 20, warmup: 3, q: TERM } },
] as const;

export const p10m: Metric = {
  id: "P-10m",
  title: `Grid loader p99 at 10M ÷ at 1M, PostgreSQL: first page, page 1000, "${TERM}" + two values, facet counts`,
  goal: "each ≤ 2× the 1M figure",
  needs: ["pg-1m", "pg-10m"],
  byNameOnly: true,
  async run(ctx) {
    const small = await ctx.dataset("pg-1m");
    const large = await ctx.dataset("pg-10m");
    const rows: { name: string; p99At1m: number; p99At10m: number; ratio: number }[] = [];
    for (const step of STEPS) {
      const opts = { rounds: ctx.rounds(5), ...step.opts };
      const p99 = async (ds: typeof small) => median((await runGridWorker(ctx, ds, step.mode, opts)).rounds.map((r) => r.a.p99));
      const p99At1m = await p99(small);
      const p99At10m = await p99(large);
      rows.push({ name: step.name, p99At1m, p99At10m, ratio: p99At10m / p99At1m });
      ctx.log(`    ${step.name}: 1M p99 ${p99At1m.toFixed(2)} ms, 10M p99 ${p99At10m.toFixed(2)} ms`);
    }
    const worst = Math.max(...rows.map((r) => r.ratio));
    return {
      figure: worst,
      unit: "×",
      absolute: { name: "10M first page p99", value: rows[0]!.p99At10m, unit: "ms" },
      checks: rows.map((r) => ({ name: `${r.name} 10M ÷ 1M`, value: r.ratio, unit: "×", goal: "≤ 2", pass: r.ratio <= 2 })),
      subject: Object.fromEntries(rows.map((r) => [`${r.name} 10M p99 ms`, r.p99At10m])),
      baseline: Object.fromEntries(rows.map((r) => [`${r.name} 1M p99 ms`, r.p99At1m])),
      rounds: ctx.rounds(5),
      notes: [`10M project built in ${large.buildSeconds} s, the 1M in ${small.buildSeconds} s (models/bulk-load.server.ts).`],
    };
  },
};
