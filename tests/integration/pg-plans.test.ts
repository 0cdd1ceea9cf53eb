import { CompiledQuery, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "~/db/connection.server";
import { createAttribute } from "~/models/attributes.server";
import { createBoard } from "~/models/boards.server";
import { loadImagesInBulk } from "~/models/bulk-load.server";
import { boardScope, projectScope } from "~/models/scope.server";
import { createShareLinks } from "~/models/share-links.server";
import { demoMetadata, seeded } from "~/services/demo.server";
import { HOT_PATHS, captureStatements, type HotPathContext } from "../../bench/lib/hot-paths";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";
import { makeProject, makeUser, storedFakeFile } from "../helpers/fixtures";
import { pgNodes, type PgPlanNode } from "../helpers/plans";

/**
 * The plans PostgreSQL picks for every hot statement (bench/lib/hot-paths.ts) on a project of 50,000 images beside
 * another team's 50,000, statistics fresh as after a load: none may read a whole table the project's size. The plans
 * are read with EXPLAIN (not timed). A sequential scan is what a lost index, a statement that hides its column behind
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

  it.each(HOT_PATHS.map((p) => [p.name, p] as const))("%s: no sequential scan of a project's table", async (_name, hot) => {
    const statements = await captureStatements(t.url, () => hot.run(ctx));
    expect(statements.length).toBeGreaterThan(0);
    const scans: string[] = [];
    for (const q of statements) {
      const { rows } = await db().executeQuery<{ "QUERY PLAN": [{ Plan: PgPlanNode }] }>(
        CompiledQuery.raw(`explain (format json) ${q.sql}`, [...q.parameters]),
      );
      for (const node of pgNodes(rows[0]!["QUERY PLAN"][0].Plan))
        if (node["Node Type"] === "Seq Scan" && PROJECT_TABLES.has(node["Relation Name"] ?? ""))
          scans.push(`${node["Relation Name"]} in: ${q.sql}`);
    }
    expect(scans).toEqual([]);
  });
});
