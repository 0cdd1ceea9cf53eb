import { sql, type RawBuilder } from "kysely";
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
    await (dialect() === "postgres" ? foldPostgres(trx, projectId, ids) : foldSqlite(trx, projectId, ids));
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

/** The values of these images, folded by image (`facetKey`). */
const folded = (ids: number[]) =>
  sql`select v.image_id, ${facetKey()} as facet_key from image_attribute_values v where v.image_id in (${sql.join(ids)}) group by v.image_id`;

/**
 * SQLite: the fold goes into a temporary table with each key's id where the project has the key already (one look-up
 * per image); only the keys it has not had are added and looked up again; then each image's id is upserted, and a
 * row whose combination did not change is left alone. (Reading the keys into the process and sending them back cost
 * bench P9's 1M-row import 13 s; a second look-up per image, 2 s: decision 0017.)
 */
async function foldSqlite(trx: Trx, projectId: number, ids: number[]) {
  const idOf = (key: RawBuilder<unknown>) =>
    sql`(select c.id from facet_combos c where c.project_id = ${projectId} and c.facet_key = ${key})`;
  await sql`create temp table if not exists facet_fold (image_id integer primary key, facet_key text not null, combo_id integer)`.execute(
    trx,
  );
  await sql`delete from temp.facet_fold`.execute(trx);
  await sql`insert into temp.facet_fold (image_id, facet_key, combo_id)
    select k.image_id, k.facet_key, ${idOf(sql.ref("k.facet_key"))} from (${folded(ids)}) k`.execute(trx);
  await sql`insert into facet_combos (project_id, facet_key)
    select distinct ${projectId}, facet_key from temp.facet_fold where combo_id is null`.execute(trx);
  await sql`update temp.facet_fold set combo_id = ${idOf(sql.ref("facet_fold.facet_key"))} where combo_id is null`.execute(trx);
  await sql`insert into image_facets (image_id, project_id, combo_id)
    select image_id, ${projectId}, combo_id from temp.facet_fold where true
    on conflict (image_id) do update set combo_id = excluded.combo_id where image_facets.combo_id <> excluded.combo_id`.execute(trx);
}

/**
 * PostgreSQL: one statement folds, looks each distinct key up once (by its md5, the unique index), adds the keys the
 * project has not had and upserts each image's id. A key a concurrent write added and committed while this one waited
 * on its unique entry is in neither this statement's snapshot nor its insert's RETURNING: such images come back as
 * missing, and the statement runs again with a snapshot that holds the key. (A join to `facet_combos` was planned as
 * a scan of the project's every combination for each chunk: bench P9-pg's import lost half its speed to it.)
 */
async function foldPostgres(trx: Trx, projectId: number, ids: number[]) {
  for (let attempt = 1; ; attempt++) {
    const { rows } = await sql<{ missing: number }>`
      with folded as materialized (${folded(ids)}),
      keys as materialized (
        select k.facet_key, (select c.id from facet_combos c
          where c.project_id = ${projectId} and md5(c.facet_key) = md5(k.facet_key) and c.facet_key = k.facet_key) as id
        from (select distinct facet_key from folded) k),
      added as (
        insert into facet_combos (project_id, facet_key) select ${projectId}::int, facet_key from keys where id is null
        on conflict do nothing returning id, facet_key),
      chosen as (
        select f.image_id, coalesce(k.id, a.id) as combo_id from folded f
        join keys k on k.facet_key = f.facet_key
        left join added a on a.facet_key = f.facet_key),
      upserted as (
        insert into image_facets (image_id, project_id, combo_id)
        select image_id, ${projectId}::int, combo_id from chosen where combo_id is not null
        on conflict (image_id) do update set combo_id = excluded.combo_id where image_facets.combo_id <> excluded.combo_id)
      select count(*) filter (where combo_id is null)::int as missing from chosen`.execute(trx);
    if (!rows[0]?.missing) return;
    if (attempt === 3) throw new Error(`The combinations of values of ${rows[0].missing} images were not found in ${attempt} attempts`);
  }
}
