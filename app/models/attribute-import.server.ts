import { db } from "~/db/connection.server";
import { InvalidError } from "~/lib/errors";
import { recordedAs } from "./actor";
import { requireEdit, type ProjectScope } from "./scope.server";
import { write } from "./write.server";

/** The SQL of Import Attributes CSV: which ids of a batch are images of the project, and a batch's values written. */
export async function imagesOfProject(scope: ProjectScope, ids: number[]): Promise<Set<number>> {
  if (!ids.length) return new Set();
  const rows = await db().selectFrom("images").select("id").where("project_id", "=", scope.project.id).where("id", "in", ids).execute();
  return new Set(rows.map((r) => r.id));
}

export type ValueBatch = { imageId: number; attributeId: number; value: string }[];

/**
 * Writes one batch of values (a multi-row upsert) in a transaction of its own; values of images that left the project
 * since the check are skipped. Answers how many were skipped so. The project's version (and its boards') move on.
 */
export async function importValues(scope: ProjectScope, batch: ValueBatch): Promise<{ skipped: number }> {
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
    if (!rows.size) return { skipped };
    await trx
      .insertInto("image_attribute_values")
      .values(
        [...rows.values()].map((v) => ({
          image_id: v.imageId,
          attribute_id: v.attributeId,
          value: v.value,
          created_by: by,
          created_at: at,
        })),
      )
      .onConflict((oc) =>
        oc
          .columns(["image_id", "attribute_id"])
          .doUpdateSet((eb) => ({ value: eb.ref("excluded.value"), created_at: eb.ref("excluded.created_at") })),
      )
      .execute();
    const imageIds = [...new Set([...rows.values()].map((v) => v.imageId))];
    touched.project(scope.project.id).attributeValues(scope.project.id, imageIds);
    await touched.boardsHolding(imageIds);
    return { skipped };
  }, at);
}
