import path from "node:path";
import { runDatasetWorker } from "../lib/worker";

import { median } from "../lib/stats";
import type { DatasetName } from "../lib/datasets";
import type { Metric } from "../lib/types";
import { datasetLabel } from "./grid-worker";

/**
 * P9 / P9-pg: Import Attributes CSV of 1,000,000 rows (image id + 5 user attributes) into the 1M project, the
 * product's importCsvFile (check pass, then the write pass, a batch of values per transaction), against the dialect's
 * fastest bare import (SQLite: a csv-parse stream + prepared inserts in one transaction; PostgreSQL: COPY into a
 * temporary table + one INSERT … SELECT); and the product's peak memory. workers/attribute-import.ts on the server
 * core, a fresh copy of the database per side and round.
 */
const BARE: Record<"sqlite" | "postgres", string> = {
  sqlite: "csv-parse + prepared inserts",
  postgres: "a bare COPY-based import (COPY into a temporary table, one INSERT … SELECT)",
};

function attributeImport(id: string, dataset: DatasetName, dialect: "sqlite" | "postgres"): Metric {
  return {
    id,
    title: `CSV import of 1,000,000 rows × 5 attributes into the 1M project, ${datasetLabel(dataset)}`,
    goal: `≥ 0.6× the rows/s of ${BARE[dialect]}; peak memory ≤ 256 MB`,
    needs: [dataset],
    async run(ctx) {
      const ds = await ctx.dataset(dataset);
      const { rows, bytes, rounds } = await runDatasetWorker<{
        rows: number;
        bytes: number;
        rounds: { a: number; b: number; peakMb: number }[];
      }>(ctx, ds, "attribute-import.ts", {
        rounds: ctx.rounds(3),
        projectId: ds.projectId,
        workDir: path.join(ctx.cache, "attribute-import"),
      });
      rounds.forEach((r, i) =>
        ctx.log(`    round ${i + 1}: import ${r.a.toFixed(0)} ms (peak +${r.peakMb.toFixed(0)} MB), bare ${r.b.toFixed(0)} ms`),
      );
      const ratios = rounds.map((r) => r.b / r.a);
      const ratio = median(ratios);
      const peak = Math.max(...rounds.map((r) => r.peakMb));
      const productMs = median(rounds.map((r) => r.a));
      const bareMs = median(rounds.map((r) => r.b));
      return {
        figure: ratio,
        unit: "×",
        absolute: { name: "import rows/s", value: (rows / productMs) * 1000, unit: "rows/s" },
        checks: [
          { name: "rows/s ratio", value: ratio, unit: "×", goal: "≥ 0.6", pass: ratio >= 0.6, rounds: "ratio" },
          { name: "peak memory", value: peak, unit: "MB", goal: "≤ 256", pass: peak <= 256 },
        ],
        subject: { "import ms": productMs, "rows/s": (rows / productMs) * 1000, "peak RSS MB": peak, "CSV MB": bytes / 1048576 },
        baseline: { "bare ms": bareMs, "rows/s": (rows / bareMs) * 1000 },
        rounds: ratios.length,
        perRound: { ratio: ratios, productMs: rounds.map((r) => r.a), bareMs: rounds.map((r) => r.b), peakMb: rounds.map((r) => r.peakMb) },
        notes: [
          `${rows.toLocaleString("en")} rows, 5 values each. The product side is importCsvFile: a check pass (csv-parse, ids checked per 1,000, ` +
            `values by the rule) and a write pass (4,000 values per upsert, sent as one JSON parameter, with the touched images refolded for the facet counts, a transaction each). Peak memory: the import runs in a child process ` +
            `of its own; the largest RSS above the child's at the start of the import (modules loaded, database open), sampled every 20 ms.`,
        ],
      };
    },
  };
}

export const p9 = attributeImport("P9", "sqlite-1m", "sqlite");
export const p9Pg = attributeImport("P9-pg", "pg-1m", "postgres");
