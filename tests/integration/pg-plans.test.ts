import { CompiledQuery, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "~/db/connection.server";
import { createAttribute, setAttributeValues } from "~/models/attributes.server";
import { createBoard } from "~/models/boards.server";
import { loadImagesInBulk } from "~/models/bulk-load.server";
import { addKeywordsBulk, deleteImagesBulk, selectionPage } from "~/models/bulk.server";
import { walkStatement } from "~/models/grid.server";
import { searchPlan } from "~/models/search-plan.server";
import { insertImageRows } from "~/models/images.server";
import { boardScope, projectScope, withFilter } from "~/models/scope.server";
import { createShareLinks } from "~/models/share-links.server";
import { demoMetadata, seeded } from "~/services/demo.server";
import { HOT_PATHS, captureStatements, type HotPath, type HotPathContext } from "../../bench/lib/hot-paths";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";
import { makeProject, makeUser, storedFakeFile } from "../helpers/fixtures";
import { pgNodes, type PgPlanNode } from "../helpers/plans";

/**
 * The plans PostgreSQL picks for every hot statement (bench/lib/hot-paths.ts) on a project of 50,000 images beside
 * another team's 150,000, fresh from a load and then aged by the product's own writes: none may read a whole table the
 * project's size. The plans are read with EXPLAIN (not timed). A sequential scan is what a lost index, a statement that hides its column behind
 * an expression, or a misjudged estimate turns into; at 1M images it costs seconds.
 */
const PROJECT_TABLES = new Set(["images", "image_search", "image_attribute_values", "image_facets", "board_images"]);
const N = 50_000;
/** Another team's project, loaded first (its ids come before the project's): the project is a quarter of the tables. */
const OTHERS = 150_000;

describe.each(dialects.filter((d) => d === "postgres"))("hot statements' plans on a 50k project (%s)", (dialect) => {
  let t: TestDatabase;
  let ctx: HotPathContext;
  beforeAll(async () => {
    t = await freshDatabase(dialect);
    const { actor } = await makeUser();
    const files = [await storedFakeFile(1), await storedFakeFile(2), await storedFakeFile(3)];
    const load = async (projectId: number, offset: number, count: number) => {
      const scope = await projectScope(actor, projectId);
      const attributes: { id: number; values: string[] }[] = [];
      for (const [name, values] of [
        ["Region", ["North", "South", "East", "West"]],
        ["Quality", ["Good", "Fair", "Poor"]],
      ] as const)
        attributes.push({ id: await createAttribute(scope, { name, type: 3 }), values: [...values] });
      await loadImagesInBulk(scope, count, (i) => {
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
    await load(other.id, N, OTHERS);
    const project = await makeProject([{ actor, role: "manager" }]);
    const [region] = await load(project.id, 0, N);
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
  afterAll(async () => {
    await t?.drop();
  });

  /**
   * Every statement the path sends, explained. A read is run (EXPLAIN ANALYZE), and no node on a project's table may
   * throw away, by a filter or a recheck, more rows than half the project: what a sequential scan of the tables does
   * (the other team's 150,000 rows go), and a walk along the wrong index (the window's min() read up the primary key
   * and filtered out 996,000 rows at 1M: an Index Scan, not a Seq Scan). A join that reads the project's index whole
   * to meet 10,000 matches throws nothing away: a choice, not this. A write is only explained: no sequential scan.
   */
  const noWholeTableReads = async (hot: HotPath) => {
    const statements = await captureStatements({ dialect: "postgres", url: t.url }, () => hot.run(ctx));
    expect(statements.length).toBeGreaterThan(0);
    const found: string[] = [];
    for (const q of statements) {
      const read = /^\s*(select|with)\b/i.test(q.sql);
      const { rows } = await db().executeQuery<{ "QUERY PLAN": [{ Plan: PgPlanNode }] }>(
        CompiledQuery.raw(`explain (${read ? "analyze, " : ""}format json) ${q.sql}`, [...q.parameters]),
      );
      const wrong = pgNodes(rows[0]!["QUERY PLAN"][0].Plan).filter((node) => {
        if (!PROJECT_TABLES.has(node["Relation Name"] ?? "")) return false;
        // Unrun (a write): a sequential scan is taken at its word.
        if (!read) return node["Node Type"] === "Seq Scan";
        // Run: what it threw away says it (a sequential scan under a LIMIT that stops after 20,000 rows is no reading
        // of a 200,000-row table).
        const thrownAway =
          ((node["Rows Removed by Filter"] ?? 0) + (node["Rows Removed by Index Recheck"] ?? 0)) * (node["Actual Loops"] ?? 1);
        return thrownAway > N / 2;
      });
      if (!wrong.length) continue;
      // The whole plan in the failure, to see what the planner misjudged.
      const text = await db().executeQuery<{ "QUERY PLAN": string }>(
        CompiledQuery.raw(`explain (${read ? "analyze, " : ""}costs off) ${q.sql}`, [...q.parameters]),
      );
      found.push(
        `${wrong.map((n) => `${n["Node Type"]} on ${n["Relation Name"]}`).join(", ")} in:\n${q.sql}\n${text.rows.map((r) => r["QUERY PLAN"]).join("\n")}`,
      );
    }
    expect(found).toEqual([]);
  };
  const paths = HOT_PATHS.map((p) => [p.name, p] as const);

  /**
   * A common word's page is walked (walkedRows): the project's keyset index read in order, newest first, and each
   * image checked by a look-up of its own (sub-plans). Planned as joins instead, the walk was left to the estimates:
   * on a bench dataset fresh from its load, a parallel scan whose workers took 25 ms to start, or every match hashed
   * and sorted (10× the walk's time).
   */
  const expectWalkPlan = async (q: CompiledQuery) => {
    const { rows } = await db().executeQuery<{ "QUERY PLAN": [{ Plan: PgPlanNode }] }>(
      CompiledQuery.raw(`explain (format json) ${q.sql}`, [...q.parameters]),
    );
    const plan = rows[0]!["QUERY PLAN"][0].Plan;
    const scan = plan.Plans?.[0];
    expect(plan["Node Type"], q.sql).toBe("Limit");
    expect([scan?.["Node Type"], scan?.["Index Name"]], q.sql).toEqual(["Index Scan", "images_project_keyset"]);
    expect(
      pgNodes(plan)
        .map((n) => n["Node Type"])
        .filter((type) => /Sort|Gather|Hash|Merge Join|Bitmap/.test(type)),
      q.sql,
    ).toEqual([]);
  };
  /** A walk's statement: the project's images themselves, narrowed by the word's matches (not a page of matches). */
  const isWalk = (q: CompiledQuery) => /^select .* from "images" where "images"."project_id" = \$1 .*image_search/s.test(q.sql);
  const walkedPaths = HOT_PATHS.filter((p) => p.name.startsWith("search: common word + two values")).map((p) => [p.name, p] as const);
  const walksImageByImage = async (hot: HotPath) => {
    const statements = await captureStatements({ dialect: "postgres", url: t.url }, () => hot.run(ctx));
    const walks = statements.filter(isWalk);
    expect(walks.length, "the page was walked").toBeGreaterThan(0);
    for (const q of walks) await expectWalkPlan(q);
  };
  /** Each tier of the walk, as walkStatement builds it (the pages above may fill from the first tier alone). */
  const tiersWalkImageByImage = async () => {
    const scope = withFilter(
      await projectScope(ctx.actor, ctx.projectId),
      new URLSearchParams([["q", ctx.common], ...ctx.values.map((v) => ["f", v])]),
    );
    const plan = searchPlan(scope);
    for (const tier of ["strong", "rest"] as const) {
      const q = walkStatement(scope, plan, { tier, terms: plan.keywords!.terms, from: null }).limit(101).compile();
      expect(isWalk(q), q.sql).toBe(true);
      await expectWalkPlan(q);
    }
  };

  describe("fresh from a bulk load", () => {
    it.each(paths)("%s: reads no table the project's size", (_name, hot) => noWholeTableReads(hot));
    it.each(walkedPaths)("%s: walks the keyset index image by image (no join, sort or parallel scan)", (_name, hot) =>
      walksImageByImage(hot),
    );
    it("a walk's two tiers: the keyset index image by image", () => tiersWalkImageByImage());

    it("export: a page deep in the project reads about the blocks of the first page (it seeks to its cursor)", async () => {
      const scope = await projectScope(ctx.actor, ctx.projectId);
      const blocksOf = async (afterId: number) => {
        const q = selectionPage(scope, { all: true, ids: [] }, { afterId, limit: 100, columns: ["id", "title", "keywords"] }).compile();
        const { rows } = await db().executeQuery<{
          "QUERY PLAN": [{ Plan: { "Shared Hit Blocks": number; "Shared Read Blocks": number } }];
        }>(CompiledQuery.raw(`explain (analyze, buffers, format json) ${q.sql}`, [...q.parameters]));
        const plan = rows[0]!["QUERY PLAN"][0].Plan;
        return plan["Shared Hit Blocks"] + plan["Shared Read Blocks"];
      };
      const deep = await db()
        .selectFrom("images")
        .select("id")
        .where("project_id", "=", ctx.projectId)
        .orderBy("id")
        .offset(N - 200)
        .limit(1)
        .executeTakeFirstOrThrow();
      const first = await blocksOf(0);
      // Started at the project's first image and stepped 49,800 index entries to the cursor, the page read 152 blocks
      // to the first page's 13 (seeking to it: 16).
      expect(await blocksOf(deep.id)).toBeLessThanOrEqual(first * 2 + 10);
    });
  });

  // Aged through the product's own writes, with no ANALYZE or VACUUM after them: dead rows from updates and deletes,
  // new rows the statistics have not seen, values rewritten.
  describe("aged: a tenth of the images re-keyworded, 2,000 deleted, 3,000 added, values rewritten", () => {
    beforeAll(async () => {
      // The autovacuum would otherwise analyse (or not) in the middle, as it happens to run.
      for (const table of PROJECT_TABLES) await sql.raw(`alter table ${table} set (autovacuum_enabled = false)`).execute(db());
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

    it.each(paths)("%s: reads no table the project's size", (_name, hot) => noWholeTableReads(hot));
    it.each(walkedPaths)("%s: walks the keyset index image by image (no join, sort or parallel scan)", (_name, hot) =>
      walksImageByImage(hot),
    );
    it("a walk's two tiers: the keyset index image by image", () => tiersWalkImageByImage());
  });
});
