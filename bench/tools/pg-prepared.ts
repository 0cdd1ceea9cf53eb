/**
 * Whether prepared statements would help Koala on PostgreSQL: every hot statement (bench/lib/hot-paths.ts) run on a
 * bench dataset as Kysely sends it (an unnamed statement: parsed and planned on every execution) and as a named
 * prepared statement (parsed once; PostgreSQL plans it for its parameters five times, then may keep a generic plan),
 * and as one on a session with `plan_cache_mode = force_custom_plan` (parsed once, planned for its parameters every
 * time), taking turns. A statement a path sends several times with other parameters (the bulk job's id ranges) is
 * timed once. Prints a markdown table of the medians, for docs/perf/postgres.md.
 *
 *   npx tsx bench/tools/pg-prepared.ts pg-100k      # the dataset must have been built by `npm run bench`
 */
import { performance } from "node:perf_hooks";
import { median } from "../lib/stats";
import { openHotPathDataset } from "../lib/hot-path-dataset";
import { HOT_PATHS, captureStatements } from "../lib/hot-paths";

const name = process.argv[2] ?? "pg-100k";
const { ds, connection, ctx } = await openHotPathDataset(name);
const client = await connection.client!();
const custom = await connection.client!();
await custom.query("set plan_cache_mode = force_custom_plan");

/** How long one run of `run` takes, in ms. */
async function time(run: () => Promise<unknown>) {
  const t = performance.now();
  await run();
  return performance.now() - t;
}

const rows: string[] = [];
let statementNo = 0;
const totals = { unnamed: 0, named: 0, custom: 0 };
const seen = new Set<string>();
try {
  for (const hot of HOT_PATHS) {
    const statements = await captureStatements({ dialect: "postgres", url: ds.databaseUrl }, () => hot.run(ctx));
    for (const q of statements) {
      if (!/^\s*(select|with)/i.test(q.sql) || seen.has(`${hot.name}|${q.sql}`)) continue;
      seen.add(`${hot.name}|${q.sql}`);
      const values = q.parameters as unknown[];
      const named = { name: `koala_bench_${++statementNo}`, text: q.sql, values };
      // As many runs as fit in about 2 s a side (at least 12: past the five custom plans).
      const first = await time(() => client.query(q.sql, values));
      const n = Math.max(12, Math.min(300, Math.floor(2000 / Math.max(first, 0.01))));
      const unnamed: number[] = [];
      const prepared: number[] = [];
      const customPlans: number[] = [];
      for (let i = 0; i < n; i++) {
        unnamed.push(await time(() => client.query(q.sql, values)));
        prepared.push(await time(() => client.query(named)));
        customPlans.push(await time(() => custom.query(named)));
      }
      // The runs after the sixth: where a generic plan, if PostgreSQL chose one, is in use.
      const [u, p, c] = [unnamed, prepared, customPlans].map((runs) => median(runs.slice(6))) as [number, number, number];
      totals.unnamed += u;
      totals.named += p;
      totals.custom += c;
      const text = q.sql.replace(/\s+/g, " ").slice(0, 60).replaceAll("|", "\\|");
      rows.push(
        `| ${hot.name} | ${text}… | ${n} | ${u.toFixed(3)} | ${p.toFixed(3)} (${(p / u).toFixed(2)}×) | ${c.toFixed(3)} (${(c / u).toFixed(2)}×) |`,
      );
    }
  }
} finally {
  client.release();
  custom.release(true);
  await connection.close();
}
process.stdout.write(
  [
    `# Unnamed and prepared statements on ${name} (${ds.count.toLocaleString("en")} images), ${new Date().toISOString()}`,
    "",
    "| path | statement | runs | unnamed p50 ms | prepared p50 ms | prepared, custom plans p50 ms |",
    "|---|---|---|---|---|---|",
    ...rows,
    `| **sum of the medians** | | | ${totals.unnamed.toFixed(2)} | ${totals.named.toFixed(2)} (${(totals.named / totals.unnamed).toFixed(2)}×) | ${totals.custom.toFixed(2)} (${(totals.custom / totals.unnamed).toFixed(2)}×) |`,
    "",
  ].join("\n"),
);
