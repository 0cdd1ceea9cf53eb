import path from "node:path";
import { runDatasetWorker } from "../lib/worker";

import { median } from "../lib/stats";
import type { DatasetName } from "../lib/datasets";
import type { Metric } from "../lib/types";
import { datasetLabel } from "./grid-worker";

/**
 * P9b: the attribute export's CSV of the 100k project (image id, title, keywords, every attribute), the product's
 * writer (writeAttributesCsv, what the export job runs before it mails), against a bare keyset read + csv-stringify
 * of the same rows and columns. workers/attribute-export.ts on the server core; both sides' files are checked equal
 * in size and rows first.
 */
function attributeExport(id: string, dataset: DatasetName): Metric {
  return {
    id,
    title: `CSV export of 100,000 images with their attributes, ${datasetLabel(dataset)}`,
    goal: "≥ 0.8× the rows/s of a bare keyset read + csv-stringify",
    needs: [dataset],
    async run(ctx) {
      const ds = await ctx.dataset(dataset);
      const { rows, bytes, rounds } = await runDatasetWorker<{ rows: number; bytes: number; rounds: { a: number; b: number }[] }>(
        ctx,
        ds,
        "attribute-export.ts",
        { rounds: ctx.rounds(5), projectId: ds.projectId, email: ds.email, workDir: path.join(ctx.cache, "attribute-export") },
      );
      rounds.forEach((r, i) => ctx.log(`    round ${i + 1}: export ${r.a.toFixed(0)} ms, bare ${r.b.toFixed(0)} ms`));
      // rows/s of the product over rows/s of the bare side: the bare time over the product's.
      const ratios = rounds.map((r) => r.b / r.a);
      const ratio = median(ratios);
      const productMs = median(rounds.map((r) => r.a));
      const bareMs = median(rounds.map((r) => r.b));
      return {
        figure: ratio,
        unit: "×",
        absolute: { name: "export rows/s", value: (rows / productMs) * 1000, unit: "rows/s" },
        checks: [{ name: "rows/s ratio", value: ratio, unit: "×", goal: "≥ 0.8", pass: ratio >= 0.8, rounds: "ratio" }],
        subject: { "export ms": productMs, "rows/s": (rows / productMs) * 1000, "CSV MB": bytes / 1048576 },
        baseline: { "bare ms": bareMs, "rows/s": (rows / bareMs) * 1000 },
        rounds: ratios.length,
        perRound: { ratio: ratios, productMs: rounds.map((r) => r.a), bareMs: rounds.map((r) => r.b) },
        notes: [
          `${rows.toLocaleString("en")} rows. The product side is writeAttributesCsv (the export job's CSV, before the mail): ` +
            `selectionRows pages of 1,000 through Kysely, one attribute-values query per page, csv-stringify into a file.`,
        ],
      };
    },
  };
}

export const p9b = attributeExport("P9b", "sqlite-100k");
export const p9bPg = attributeExport("P9b-pg", "pg-100k");
