import { sql, type Expression, type SqlBool } from "kysely";
import { dialect } from "~/db/connection.server";
import { chunksOf } from "~/lib/chunks";
import type { Trx } from "./write.server";

/**
 * Each image's attribute values folded into one key, what the sidebar's counts group by (decision 0017): the key is
 * written once per project in `facet_combos`, and `image_facets` names each image's combination by its id
 * (migrations 013, 031). Refreshed by `write` for the images a write says it changed (Touched.attributeValues):
 * set-based, a few hundred images per statement, in the write's transaction. A trigger per value was tried and
 * measured: it recomputed an image once per value written, ten times the cost of the CSV import's inserts (bench P9).
 */

/**
 * The key of one image's values, over `image_attribute_values v` grouped by image. PostgreSQL sorts by attribute;
 * SQLite reads them in its primary key's order (image, attribute), and a sort per image doubled the cost. The order
 * only decides which images share a combination, never a count.
 */
export const facetKey = () =>
  dialect() === "postgres"
    ? sql<string>`json_agg(json_build_array(v.attribute_id, v.value) order by v.attribute_id)::text`
    : sql<string>`json_group_array(json_array(v.attribute_id, v.value))`;

/**
 * `c.facet_key` is the key `key`, by the unique index: PostgreSQL's is on the key's md5 (a B-tree entry cannot hold
 * a long key), so the md5s are compared too.
 */
export const sameComboKey = (key: string): Expression<SqlBool> =>
  dialect() === "postgres"
    ? sql<SqlBool>`md5(c.facet_key) = md5(${sql.ref(key)}) and c.facet_key = ${sql.ref(key)}`
    : sql<SqlBool>`c.facet_key = ${sql.ref(key)}`;

/**
 * Folds again the values of these images of a project; with `removed` (a write that may have taken values away), the
 * rows of images left without values go (an import only sets values: that delete was an eighth of its fold, bench P9).
 * On PostgreSQL the images are locked first: two writes changing different attributes of one image would otherwise
 * each fold it from a snapshot without the other's value, and the later upsert would keep a stale key (SQLite has one
 * writer). A combination no image holds any longer stays: it is only ever reached from an image's row, and one is
 * kept per distinct set of values a project has had (pruning it would need an index on every image's combination,
 * which each refold would move).
 */
export async function refreshImageFacets(trx: Trx, projectId: number, imageIds: number[], { removed = true }: { removed?: boolean } = {}) {
  for (const ids of chunksOf(
    [...new Set(imageIds)].sort((a, b) => a - b),
    500,
  )) {
    if (dialect() === "postgres") await trx.selectFrom("images").select("id").where("id", "in", ids).orderBy("id").forUpdate().execute();
    const folded = trx
      .selectFrom("image_attribute_values as v")
      .select(["v.image_id", facetKey().as("facet_key")])
      .where("v.image_id", "in", ids)
      .groupBy("v.image_id");
    // New combinations first (most writes make none: the check skips them); DO NOTHING for a concurrent writer's.
    await trx
      .insertInto("facet_combos")
      .columns(["project_id", "facet_key"])
      .expression(
        trx
          .selectFrom(folded.as("g"))
          .select([sql.lit(projectId).as("project_id"), "g.facet_key"])
          .distinct()
          .where(({ not, exists, selectFrom }) =>
            not(
              exists(
                selectFrom("facet_combos as c").select("c.id").where("c.project_id", "=", projectId).where(sameComboKey("g.facet_key")),
              ),
            ),
          ),
      )
      .onConflict((oc) => oc.doNothing())
      .execute();
    // An upsert rewrites a row in place (a delete and an insert moved every entry twice: bench P9's import); a row
    // whose combination did not change is left alone.
    await trx
      .insertInto("image_facets")
      .columns(["image_id", "project_id", "combo_id"])
      .expression(
        trx
          .selectFrom(folded.as("g"))
          // In this order: SQLite takes a cross join's tables as written, each fold's key looked up by the unique
          // index (left to itself it scanned the project's combinations once per image: bench P9's import took a
          // quarter longer).
          .crossJoin("facet_combos as c")
          .select(["g.image_id", sql.lit(projectId).as("project_id"), "c.id"])
          .where("c.project_id", "=", projectId)
          .where(sameComboKey("g.facet_key")),
      )
      .onConflict((oc) =>
        oc
          .column("image_id")
          .doUpdateSet((eb) => ({ combo_id: eb.ref("excluded.combo_id") }))
          .where(sql.ref("image_facets.combo_id"), "<>", sql.ref("excluded.combo_id")),
      )
      .execute();
    if (!removed) continue;
    await trx
      .deleteFrom("image_facets")
      .where("image_id", "in", ids)
      .where(({ not, exists, selectFrom }) =>
        not(exists(selectFrom("image_attribute_values as v").select("v.image_id").whereRef("v.image_id", "=", "image_facets.image_id"))),
      )
      .execute();
  }
}
