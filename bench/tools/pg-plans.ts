/**
 * Every hot statement's plan on a PostgreSQL bench dataset (bench/lib/hot-paths.ts), as the database runs it:
 * EXPLAIN (ANALYZE, BUFFERS), run once before, with the statement's SQL, as markdown on stdout. For
 * docs/perf/postgres.md.
 *
 *   npx tsx bench/tools/pg-plans.ts pg-1m > /tmp/plans.md      # the dataset must have been built by `npm run bench`
 *
 * It adds to the dataset, once, a board of 1,000 of the project's images and a share link to it (hot-path-dataset.ts).
 */
import { performance } from "node:perf_hooks";
import { openHotPathDataset } from "../lib/hot-path-dataset";
import { HOT_PATHS, captureStatements } from "../lib/hot-paths";

const name = process.argv[2] ?? "pg-1m";
const { ds, connection, ctx } = await openHotPathDataset(name);

const out: string[] = [`# Plans on ${name} (${ds.count.toLocaleString("en")} images), ${new Date().toISOString()}`, ""];
for (const hot of HOT_PATHS) {
  // Not warmed first: the process's caches (a count kept per version) would hide statements. Each statement is
  // explained after the capture ran it once, so its pages are as warm as the database keeps them.
  const t = performance.now();
  const statements = await captureStatements({ dialect: "postgres", url: ds.databaseUrl }, () => hot.run(ctx));
  const ms = performance.now() - t;
  out.push(`## ${hot.name} (${statements.length} statements, ${ms.toFixed(1)} ms through a fresh logging pool)`, "");
  for (const q of statements) {
    if (!/^\s*(select|with|insert|update|delete)/i.test(q.sql)) continue;
    // A write is explained, never run twice.
    const explain = /^\s*(select|with)/i.test(q.sql) ? "explain (analyze, buffers)" : "explain";
    const { rows } = await connection.client!().then(async (client) => {
      try {
        return await client.query(`${explain} ${q.sql}`, q.parameters as unknown[]);
      } finally {
        client.release();
      }
    });
    out.push(
      "```sql",
      q.sql,
      `-- ${JSON.stringify(q.parameters)}`,
      "```",
      "```",
      ...rows.map((r: Record<string, string>) => r["QUERY PLAN"] ?? ""),
      "```",
      "",
    );
  }
}
await connection.close();
process.stdout.write(`${out.join("\n")}\n`);
