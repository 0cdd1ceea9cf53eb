/**
 * Every hot statement's plan on a PostgreSQL bench dataset (bench/lib/hot-paths.ts), as the database runs it:
 * EXPLAIN (ANALYZE, BUFFERS), run once before, with the statement's SQL, as markdown on stdout. For
 * docs/perf/postgres.md.
 *
 *   npx tsx bench/tools/pg-plans.ts pg-1m > /tmp/plans.md      # the dataset must have been built by `npm run bench`
 *
 * It adds to the dataset, once, a board of 1,000 of the project's images (every n-th) and a share link to it.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { sql } from "kysely";
import { loadConfig, setConfig } from "~/config.server";
import { db } from "~/db/connection.server";
import { createBoard } from "~/models/boards.server";
import { boardScope, projectScope } from "~/models/scope.server";
import { createShareLinks } from "~/models/share-links.server";
import { openDatabase } from "~/services/boot.server";
import { appEnv, type Dataset } from "../lib/datasets";
import { HOT_PATHS, captureStatements, type HotPathContext } from "../lib/hot-paths";

const name = process.argv[2] ?? "pg-1m";
const ds = JSON.parse(readFileSync(path.join("bench/.cache/datasets", name, "dataset.json"), "utf8")) as Dataset;
if (!ds.databaseUrl) throw new Error(`${name} is not a PostgreSQL dataset`);
setConfig(loadConfig({ ...process.env, ...appEnv({ ...ds, dataDir: path.resolve("bench/.cache/datasets", name) }) }));
const connection = await openDatabase();
const user = await db().selectFrom("users").select(["id", "role"]).where("email", "=", ds.email).executeTakeFirstOrThrow();
const actor = { id: user.id, role: user.role };

const TITLE = "Plans board";
let boardId = (
  await db().selectFrom("boards").select("id").where("project_id", "=", ds.projectId).where("title", "=", TITLE).executeTakeFirst()
)?.id;
if (!boardId) {
  const every = Math.max(1, Math.floor(ds.count / 1000));
  const ids = await db()
    .selectFrom("images")
    .select("id")
    .where("project_id", "=", ds.projectId)
    .where(sql<boolean>`id % ${every} = 0`)
    .limit(1000)
    .execute();
  boardId = (await createBoard(await projectScope(actor, ds.projectId), { title: TITLE, imageIds: ids.map((r) => r.id) })).id;
  await createShareLinks(await boardScope(actor, boardId), [null], { expiry: "never", allowDownload: true, showMetadata: true }, "plans");
}
const link = await db().selectFrom("share_links").select("id").where("board_id", "=", boardId).executeTakeFirstOrThrow();
const values = await db()
  .selectFrom("image_attribute_values as v")
  .select(["v.attribute_id", "v.value", db().fn.countAll().as("n")])
  .where("v.attribute_id", "=", (eb) =>
    eb
      .selectFrom("attributes")
      .select((e) => e.fn.min<number>("id").as("id"))
      .where("project_id", "=", ds.projectId),
  )
  .groupBy(["v.attribute_id", "v.value"])
  .orderBy("n", "desc")
  .limit(2)
  .execute();
const ctx: HotPathContext = {
  actor,
  projectId: ds.projectId,
  boardId,
  linkId: link.id,
  values: values.map((v) => `${v.attribute_id}:${v.value}`),
  common: "london",
  rare: "zanzibar",
};

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
