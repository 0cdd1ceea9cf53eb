import { db } from "~/db/connection.server";
import { InvalidError } from "~/lib/errors";
import { recordedAs } from "./actor";
import { requireEdit, requireManage, type ProjectScope } from "./scope.server";
import { write } from "./write.server";

export type AttributeType = 1 | 2 | 3;

/** Creates a project attribute (1 WSC imported, 2 system created, 3 user created). */
export async function createAttribute(
  scope: ProjectScope,
  input: { name: string; code: string; type: AttributeType; active?: boolean },
): Promise<number> {
  requireManage(scope);
  const projectId = scope.project.id;
  const now = Date.now();
  const row = await db()
    .insertInto("attributes")
    .values({
      project_id: projectId,
      name: input.name,
      code: input.code,
      type: input.type,
      active: input.active === false ? 0 : 1,
      created_at: now,
      updated_at: now,
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  return row.id;
}

/**
 * Sets attribute values on images of one project. Every image and attribute id must belong to
 * the project; otherwise nothing is written.
 */
export async function setAttributeValues(scope: ProjectScope, values: { imageId: number; attributeId: number; value: string }[]) {
  if (!values.length) return;
  requireEdit(scope);
  const projectId = scope.project.id;
  const imageIds = [...new Set(values.map((v) => v.imageId))];
  const attributeIds = [...new Set(values.map((v) => v.attributeId))];
  const now = Date.now();
  await write(async (trx, touched) => {
    const images = await trx.selectFrom("images").select("id").where("project_id", "=", projectId).where("id", "in", imageIds).execute();
    const attributes = await trx
      .selectFrom("attributes")
      .select("id")
      .where("project_id", "=", projectId)
      .where("id", "in", attributeIds)
      .execute();
    if (images.length !== imageIds.length || attributes.length !== attributeIds.length)
      throw new InvalidError("Attribute or image outside the project");
    await trx
      .insertInto("image_attribute_values")
      .values(
        values.map((v) => ({
          image_id: v.imageId,
          attribute_id: v.attributeId,
          value: v.value,
          created_by: recordedAs(scope.actor),
          created_at: now,
        })),
      )
      .onConflict((oc) => oc.columns(["image_id", "attribute_id"]).doUpdateSet((eb) => ({ value: eb.ref("excluded.value") })))
      .execute();
    // Filters, counts and the image panel follow the project's version, a board's grid its own.
    touched.project(projectId);
    await touched.boardsHolding(imageIds);
  }, now);
}
