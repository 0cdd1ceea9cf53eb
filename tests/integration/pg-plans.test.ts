import { CompiledQuery, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "~/db/connection.server";
import { createAttribute, setAttributeValues } from "~/models/attributes.server";
import { createBoard } from "~/models/boards.server";
import { loadImagesInBulk } from "~/models/bulk-load.server";
import { addKeywordsBulk, deleteImagesBulk } from "~/models/bulk.server";
import { insertImageRows } from "~/models/images.server";
import { boardScope, projectScope, withFilter } from "~/models/scope.server";
import { createShareLinks } from "~/models/share-links.server";
import { demoMetadata, seeded } from "~/services/demo.server";
import { HOT_PATHS, captureStatements, type HotPathContext } from "../../bench/lib/hot-paths";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";
import { makeProject, makeUser, storedFakeFile } from "../helpers/fixtures";
import { pgNodes, type PgPlanNode } from "../helpers/plans";

/**
 * The plans PostgreSQL picks for every hot statement (bench/lib/hot-paths.ts) on a project of 50,000 images beside
 * another team's 50,000, fresh from a load and then aged by the product's own writes: none may read a whole table the
 * project's size. The plans are read with EXPLAIN (not timed). A sequential scan is what a lost index, a statement that hides its column behind
 * an expression, or a misjudged estimate turns into; at 1M images it costs seconds.
 */
const PROJECT_TABLES = new Set(["images", "image_search", "image_attribute_values", "image_facets", "board_images"]);
const N = 50_000;

describe.each(dialects.filter((d) => d === "postgres"))("hot statements' plans on a 50k project (%s)", (dialect) => {
  let t: TestDatabase;
  let ctx: HotPathContext;
  beforeAll(async () => {
    t = await freshDatabase(dialect);
    const { actor } = await makeUser();
    const files = [await storedFakeFile(1), await storedFakeFile(2), await storedFakeFile(3)];
    const load = async (projectId: number, offset: number) => {
      const scope = await projectScope(actor, projectId);
      const attributes: { id: number; values: string[] }[] = [];
      for (const [name, values] of [
        ["Region", ["North", "South", "East", "West"]],
        ["Quality", ["Good", "Fair", "Poor"]],
      ] as const)
        attributes.push({ id: await createAttribute(scope, { name, type: 3 }), values: [...values] });
      await loadImagesInBulk(scope, N, (i) => {
        const rnd = seeded(offset + i + 1);
        return {
          file: files[i % files.length]!,
          meta: demoMetadata(offset + i + 1),
          at: Date.UTC(2024, 0, 1) + (offset + i) * 1000,
          values: attributes
            .filter(() => rnd() < 0.8)
            .map((a) => ({ attributeId: a.id, value: a.values[Math.floor(rnd() * a.values.length)]! })),
        };
      });
      return attributes;
    };
    const other = await makeProject([{ actor, role: "manager" }]);
    await load(other.id, N);
    const project = await makeProject([{ actor, role: "manager" }]);
    const [region] = await load(project.id, 0);
    const ids = await db()
      .selectFrom("images")
      .select("id")
      .where("project_id", "=", project.id)
      .where(sql<boolean>`id % 50 = 0`)
      .execute();
    const board = await createBoard(await projectScope(actor, project.id), { title: "Plans", imageIds: ids.map((r) => r.id) });
    await createShareLinks(
      await boardScope(actor, board.id),
      [null],
      { expiry: "never", allowDownload: true, showMetadata: true },
      "plans",
    );
    const link = await db().selectFrom("share_links").select("id").where("board_id", "=", board.id).executeTakeFirstOrThrow();
    ctx = {
      actor,
      projectId: project.id,
      boardId: board.id,
      linkId: link.id,
      values: [`${region!.id}:North`, `${region!.id}:South`],
      common: "london",
      rare: "zanzibar",
    };
  }, 300_000);
  afterAll(() => t?.drop());

  const noWholeTableScans = async (hot: (typeof HOT_PATHS)[number]) => {
    const statements = await captureStatements(t.url, () => hot.run(ctx));
    expect(statements.length).toBeGreaterThan(0);
    const scans: string[] = [];
    for (const q of statements) {
      const { rows } = await db().executeQuery<{ "QUERY PLAN": [{ Plan: PgPlanNode }] }>(
        CompiledQuery.raw(`explain (format json) ${q.sql}`, [...q.parameters]),
      );
      const whole = pgNodes(rows[0]!["QUERY PLAN"][0].Plan).filter(
        (node) => node["Node Type"] === "Seq Scan" && PROJECT_TABLES.has(node["Relation Name"] ?? ""),
      );
      if (!whole.length) continue;
      // The whole plan in the failure, to see what the planner misjudged.
      const text = await db().executeQuery<{ "QUERY PLAN": string }>(CompiledQuery.raw(`explain ${q.sql}`, [...q.parameters]));
      scans.push(
        `${whole.map((n) => n["Relation Name"]).join(", ")} read whole in:\n${q.sql}\n${text.rows.map((r) => r["QUERY PLAN"]).join("\n")}`,
      );
    }
    expect(scans).toEqual([]);
  };
  const paths = HOT_PATHS.map((p) => [p.name, p] as const);

  describe("fresh from a bulk load", () => {
    it.each(paths)("%s: no sequential scan of a project's table", (_name, hot) => noWholeTableScans(hot));
  });

  // Aged through the product's own writes, with no ANALYZE or VACUUM after them: dead rows from updates and deletes,
  // new rows the statistics have not seen, values rewritten.
  describe("aged: a tenth of the images re-keyworded, 2,000 deleted, 3,000 added, values rewritten", () => {
    beforeAll(async () => {
      const scope = await projectScope(ctx.actor, ctx.projectId);
      await addKeywordsBulk(withFilter(scope, new URLSearchParams({ q: "london" })), { all: true, ids: [] }, ["aged"]);
      const oldest = await db()
        .selectFrom("images")
        .select("id")
        .where("project_id", "=", ctx.projectId)
        .orderBy("id")
        .limit(2000)
        .execute();
      await deleteImagesBulk(scope, { all: false, ids: oldest.map((r) => r.id) });
      const file = await storedFakeFile(4);
      for (let batch = 0; batch < 3; batch++)
        await insertImageRows(
          scope,
          Array.from({ length: 1000 }, (_, i) => ({
            file,
            meta: demoMetadata(200_000 + batch * 1000 + i),
            at: Date.UTC(2025, 0, 1) + (batch * 1000 + i) * 1000,
          })),
        );
      const some = await db()
        .selectFrom("images")
        .select("id")
        .where("project_id", "=", ctx.projectId)
        .orderBy("id", "desc")
        .limit(5000)
        .execute();
      const region = Number(ctx.values[0]!.split(":")[0]);
      await setAttributeValues(
        scope,
        some.map((r) => ({ imageId: r.id, attributeId: region, value: "West" })),
      );
    }, 120_000);

    it.each(paths)("%s: no sequential scan of a project's table", (_name, hot) => noWholeTableScans(hot));
  });
});
