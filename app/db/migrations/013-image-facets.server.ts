import { sql, type Kysely, type Migration } from "kysely";
import type { Dialect } from "../connection.server";

/**
 * `image_facets`: each image's attribute values folded into one text, `facet_key` (a JSON array of [attribute id,
 * value] pairs), one row per image that holds values, with the image's project (images never change project). The
 * sidebar's counts group a search's images by it in one pass (decision 0017). Every write of values refreshes the
 * rows of the images it touched, set-based, in its transaction (`Touched.attributeValues` in write.server.ts).
 */
export function imageFacets(dialect: Dialect): Migration {
  const key =
    dialect === "postgres"
      ? "json_agg(json_build_array(v.attribute_id, v.value) order by v.attribute_id)::text"
      : "json_group_array(json_array(v.attribute_id, v.value))";
  return {
    async up(db: Kysely<any>) {
      for (const statement of [
        `create table image_facets (
           image_id integer primary key references images(id) on delete cascade,
           project_id integer not null,
           facet_key text not null)`,
        `insert into image_facets (image_id, project_id, facet_key)
           select v.image_id, min(i.project_id), ${key}
           from image_attribute_values v join images i on i.id = v.image_id group by v.image_id`,
        "create index image_facets_project on image_facets (project_id)",
      ])
        await sql.raw(statement).execute(db);
    },
  };
}
