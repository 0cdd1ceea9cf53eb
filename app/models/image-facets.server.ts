import { sql } from "kysely";
import { dialect } from "~/db/connection.server";
import { chunksOf } from "~/lib/chunks";
import type { Trx } from "./write.server";

/**
 * Each image's attribute values folded into one key (`image_facets`, migration 013; decision 0017), what the
 * sidebar's counts group by. Refreshed by `write` for the images a write says it changed (Touched.attributeValues):
 * set-based, a few hundred images per statement, in the write's transaction. A trigger per value was tried and
 * measured: it recomputed an image once per value written, ten times the cost of the CSV import's inserts (bench P9).
 */

/**
 * The key of one image's values, over `image_attribute_values v` grouped by image. PostgreSQL sorts by attribute;
 * SQLite reads them in its primary key's order (image, attribute), and a sort per image doubled the cost. The order
 * only decides which images share a group, never a count.
 */
export const facetKey = () =>
  dialect() === "postgres"
    ? sql<string>`json_agg(json_build_array(v.attribute_id, v.value) order by v.attribute_id)::text`
    : sql<string>`json_group_array(json_array(v.attribute_id, v.value))`;

/**
 * Folds again the values of these images of a project; with `removed` (a write that may have taken values away), the
 * rows of images left without values go (an import only sets values: that delete was an eighth of its fold, bench P9).
 * On PostgreSQL the images are locked first: two writes changing different attributes of one image would otherwise
 * each fold it from a snapshot without the other's value, and the later upsert would keep a stale key (SQLite has one
 * writer).
 */
export async function refreshImageFacets(trx: Trx, projectId: number, imageIds: number[], { removed = true }: { removed?: boolean } = {}) {
  for (const ids of chunksOf(
    [...new Set(imageIds)].sort((a, b) => a - b),
    500,
  )) {
    if (dialect() === "postgres") await trx.selectFrom("images").select("id").where("id", "in", ids).orderBy("id").forUpdate().execute();
    // An upsert rewrites a row in place (a delete and an insert moved every entry twice: bench P9's import).
    await trx
      .insertInto("image_facets")
      .columns(["image_id", "project_id", "facet_key"])
      .expression(
        trx
          .selectFrom("image_attribute_values as v")
          .select(["v.image_id", sql.lit(projectId).as("project_id"), facetKey().as("facet_key")])
          .where("v.image_id", "in", ids)
          .groupBy("v.image_id"),
      )
      .onConflict((oc) => oc.column("image_id").doUpdateSet((eb) => ({ facet_key: eb.ref("excluded.facet_key") })))
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
