import { sql } from "kysely";
import { dialect } from "~/db/connection.server";
import { InvalidError } from "~/lib/errors";
import { recordedAs } from "./actor";
import { requireEdit, type ProjectScope } from "./scope.server";
import { write, type Trx } from "./write.server";

// The SQL of Import Attributes CSV: a batch of values written (which ids are the project's images: idsInScope).

export type ValueBatch = { imageId: number; attributeId: number; value: string }[];

/**
 * A batch's rows as one JSON parameter the database unpacks, rather than 5 parameters a row: compiling and binding
 * 20,000 parameters cost 4.5 ms a batch, a sixth of the import's time (bench P9). `where true` keeps SQLite from
 * reading the upsert's ON CONFLICT as a join's ON.
 */
function valueRows(batch: ValueBatch, by: number | null, at: number) {
  const json = JSON.stringify(batch.map((v) => [v.imageId, v.attributeId, v.value]));
  const who = sql`cast(${by} as integer)`;
  const when = sql`cast(${at} as bigint)`;
  if (dialect() === "postgres")
    return sql`select (e->>0)::integer, (e->>1)::integer, e->>2, ${who}, ${when} from json_array_elements(${json}::json) as e where true`;
  return sql`select json_extract(j.value, '$[0]'), json_extract(j.value, '$[1]'), json_extract(j.value, '$[2]'), ${who}, ${when}
    from json_each(${json}) as j where true`;
}

/**
 * Writes one batch of values (a multi-row upsert) in a transaction of its own; values of images that left the project
 * since the check are skipped. Answers how many were skipped so. The project's version (and its boards') move on.
 * `commitWith` runs in the same transaction, last (a job's checkpoint: the batch and the record of it commit together;
 * if it throws, the batch is not written).
 */
export async function importValues(
  scope: ProjectScope,
  batch: ValueBatch,
  commitWith?: (trx: Trx, skipped: number) => Promise<void>,
): Promise<{ skipped: number }> {
  requireEdit(scope);
  const at = Date.now();
  const by = recordedAs(scope.actor);
  return write(async (trx, touched) => {
    // The model holds the project's boundary itself: only user attributes of this project take values here.
    const attributeIds = [...new Set(batch.map((v) => v.attributeId))];
    const own = await trx
      .selectFrom("attributes")
      .select("id")
      .where("project_id", "=", scope.project.id)
      .where("type", "=", 3)
      .where("id", "in", attributeIds)
      .execute();
    if (own.length !== attributeIds.length) throw new InvalidError("Attribute outside the project");
    const ids = [...new Set(batch.map((v) => v.imageId))];
    const present = new Set(
      (await trx.selectFrom("images").select("id").where("project_id", "=", scope.project.id).where("id", "in", ids).execute()).map(
        (r) => r.id,
      ),
    );
    // The last value of an image and attribute in the batch wins (one upsert may not name a row twice).
    const rows = new Map<string, ValueBatch[number]>();
    let skipped = 0;
    for (const v of batch) {
      if (present.has(v.imageId)) rows.set(`${v.imageId}:${v.attributeId}`, v);
      else skipped += 1;
    }
    if (!rows.size) {
      await commitWith?.(trx, skipped);
      return { skipped };
    }
    await trx
      .insertInto("image_attribute_values")
      .columns(["image_id", "attribute_id", "value", "created_by", "created_at"])
      .expression(valueRows([...rows.values()], by, at))
      .onConflict((oc) =>
        oc
          .columns(["image_id", "attribute_id"])
          .doUpdateSet((eb) => ({ value: eb.ref("excluded.value"), created_at: eb.ref("excluded.created_at") })),
      )
      .execute();
    const imageIds = [...new Set([...rows.values()].map((v) => v.imageId))];
    touched.attributeValues(scope.project.id, imageIds, { removed: false });
    await touched.boardsHolding(imageIds);
    await commitWith?.(trx, skipped);
    return { skipped };
  }, at);
}
