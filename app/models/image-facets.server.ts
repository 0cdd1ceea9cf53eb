import { createHash } from "node:crypto";
import { sql } from "kysely";
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

/** The ids of these keys among the project's combinations (PostgreSQL finds them by md5, its unique index). */
async function comboIds(trx: Trx, projectId: number, keys: string[]): Promise<Map<string, number>> {
  const rows = await trx
    .selectFrom("facet_combos")
    .select(["id", "facet_key"])
    .where("project_id", "=", projectId)
    .where((eb) =>
      dialect() === "postgres"
        ? eb(
            sql`md5(facet_key)`,
            "in",
            keys.map((k) => createHash("md5").update(k).digest("hex")),
          )
        : eb("facet_key", "in", keys),
    )
    .execute();
  const wanted = new Set(keys);
  return new Map(rows.filter((r) => wanted.has(r.facet_key)).map((r) => [r.facet_key, r.id]));
}

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
    // Folded once, in the process: the keys looked up, the missing ones added, each image given its key's id.
    const folded = await trx
      .selectFrom("image_attribute_values as v")
      .select(["v.image_id", facetKey().as("facet_key")])
      .where("v.image_id", "in", ids)
      .groupBy("v.image_id")
      .execute();
    if (folded.length) {
      const keys = [...new Set(folded.map((r) => r.facet_key))];
      let idOf = await comboIds(trx, projectId, keys);
      const missing = keys.filter((k) => !idOf.has(k));
      if (missing.length) {
        // DO NOTHING for a concurrent writer's; read back, theirs included.
        await trx
          .insertInto("facet_combos")
          .values(missing.map((facet_key) => ({ project_id: projectId, facet_key })))
          .onConflict((oc) => oc.doNothing())
          .execute();
        idOf = await comboIds(trx, projectId, keys);
      }
      // An upsert rewrites a row in place (a delete and an insert moved every entry twice: bench P9's import); a row
      // whose combination did not change is left alone.
      await trx
        .insertInto("image_facets")
        .values(folded.map((r) => ({ image_id: r.image_id, project_id: projectId, combo_id: idOf.get(r.facet_key)! })))
        .onConflict((oc) =>
          oc
            .column("image_id")
            .doUpdateSet((eb) => ({ combo_id: eb.ref("excluded.combo_id") }))
            .where(sql.ref("image_facets.combo_id"), "<>", sql.ref("excluded.combo_id")),
        )
        .execute();
    }
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
