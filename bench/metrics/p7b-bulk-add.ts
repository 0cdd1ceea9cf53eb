import path from "node:path";
import { runDatasetWorker } from "../lib/worker";

import { median } from "../lib/stats";
import type { DatasetName } from "../lib/datasets";
import type { Metric } from "../lib/types";
import { datasetLabel } from "./grid-worker";

/**
 * P7b: bulk Add of the 100k project (Select all) to an empty board, the product's path — runBulk, which queues it as
 * a job over 5,000 images, and that job run to its end in process (chunks of 2,000, each its own transaction) —
 * against a bare INSERT … SELECT of the same rows. workers/bulk-add.ts on the server core; a fresh copy of the
 * database per side and round.
 */
function bulkAdd(id: string, dataset: DatasetName): Metric {
  return {
    id,
    title: `Bulk Add of a 100,000-image selection to a board, ${datasetLabel(dataset)}`,
    goal: "≤ 1.5× a bare INSERT … SELECT of the same rows",
    needs: [dataset],
    async run(ctx) {
      const ds = await ctx.dataset(dataset);
      const { count, rounds } = await runDatasetWorker<{ count: number; rounds: { a: number; b: number }[] }>(ctx, ds, "bulk-add.ts", {
        rounds: ctx.rounds(7),
        projectId: ds.projectId,
        email: ds.email,
        workDir: path.join(ctx.cache, "bulk-add"),
      });
      rounds.forEach((r, i) => ctx.log(`    round ${i + 1}: bulk Add ${r.a.toFixed(0)} ms, bare INSERT … SELECT ${r.b.toFixed(0)} ms`));
      const ratios = rounds.map((r) => r.a / r.b);
      const ratio = median(ratios);
      const productMs = median(rounds.map((r) => r.a));
      const bareMs = median(rounds.map((r) => r.b));
      return {
        figure: ratio,
        unit: "×",
        absolute: { name: "bulk Add", value: productMs, unit: "ms" },
        checks: [{ name: "ratio", value: ratio, unit: "×", goal: "≤ 1.5", pass: ratio <= 1.5, rounds: "ratio" }],
        subject: { "bulk Add ms": productMs, "images/s": (count / productMs) * 1000 },
        baseline: { "bare INSERT … SELECT ms": bareMs },
        rounds: ratios.length,
        perRound: { ratio: ratios, productMs: rounds.map((r) => r.a), bareMs: rounds.map((r) => r.b) },
        notes: [
          `${count.toLocaleString("en")} images onto an empty board. The product side is runBulk (count, queue) and the bulk job it queues, ` +
            `run by runOnce in the same process: the selection in id ranges of 2,000, each range's copyToBoard in its own transaction, progress after each.`,
        ],
      };
    },
  };
}

export const p7b = bulkAdd("P7b", "sqlite-100k");
export const p7bPg = bulkAdd("P7b-pg", "pg-100k");
