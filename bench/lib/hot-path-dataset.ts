import { readFileSync } from "node:fs";
import path from "node:path";
import { sql } from "kysely";
import { loadConfig, setConfig } from "~/config.server";
import { db, type Connection } from "~/db/connection.server";
import { createBoard } from "~/models/boards.server";
import { boardScope, projectScope } from "~/models/scope.server";
import { createShareLinks } from "~/models/share-links.server";
import { openDatabase } from "~/services/boot.server";
import { appEnv, type Dataset } from "./datasets";
import type { HotPathContext } from "./hot-paths";

/**
 * A PostgreSQL bench dataset (built by `npm run bench`) opened as the app's database, with what the hot paths need
 * (bench/lib/hot-paths.ts): adds to the dataset, once, a board of 1,000 of the project's images (every n-th) and a
 * share link to it. For the tools that run the hot statements (bench/tools/pg-plans.ts, pg-prepared.ts).
 */
export async function openHotPathDataset(
  name: string,
): Promise<{ ds: Dataset & { databaseUrl: string }; connection: Connection; ctx: HotPathContext }> {
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
  return { ds: { ...ds, databaseUrl: ds.databaseUrl }, connection, ctx };
}
