import { sql } from "kysely";
import { db } from "~/db/connection.server";
import { ATTRIBUTE_MESSAGES, MAX_ACTIVE_ATTRIBUTES } from "~/lib/attribute-rules";
import { ConflictError, InvalidError, NotFoundError } from "~/lib/errors";
import { recordedAs } from "./actor";
import { byActor, recordAudit } from "./audit.server";
import { inRange, type IdRange } from "./bulk.server";
import { selectedImageIds, type Picked } from "./grid.server";
import { requireEdit, requireManage, type MemberScope, type ProjectScope } from "./scope.server";
import { isUniqueViolation, write, type Trx } from "./write.server";
import { requireLiveImage } from "./images.server";

export type AttributeType = 1 | 2 | 3;

export interface AttributeRow {
  id: number;
  name: string;
  code: string;
  active: boolean;
  type: AttributeType;
}

/** A project's attributes, in the order they were made (the Manage Attributes list and the panel's choices). */
export async function attributesOf(scope: MemberScope): Promise<AttributeRow[]> {
  const rows = await db()
    .selectFrom("attributes")
    .select(["id", "name", "code", "active", "type"])
    .where("project_id", "=", scope.project.id)
    .orderBy("id")
    .execute();
  return rows.map((r) => ({ ...r, active: r.active === 1 }));
}

/** The attributes people assign values of: the project's active user attributes (type 3). */
export const assignableAttributes = async (scope: MemberScope) =>
  (await attributesOf(scope)).filter((a) => a.type === 3 && a.active).map((a) => ({ id: a.id, name: a.name }));

/** An attribute of the scope's project, or 404 (an id of another project is as unknown as a made-up one). */
async function attributeOf(executor: Trx | ReturnType<typeof db>, scope: MemberScope, attributeId: number) {
  const row = await executor
    .selectFrom("attributes")
    .select(["id", "name", "type", "active"])
    .where("project_id", "=", scope.project.id)
    .where("id", "=", attributeId)
    .executeTakeFirst();
  if (!row) throw new NotFoundError("Attribute not found");
  return row;
}

/** A user attribute (type 3), the only kind people assign and remove values of. */
export async function userAttributeOf(scope: MemberScope, attributeId: number) {
  const row = await attributeOf(db(), scope, attributeId);
  if (row.type !== 3) throw new NotFoundError("Attribute not found");
  return row;
}

/** The attribute a value is assigned to is not an active user attribute of the project: the field's own message. */
export class NotAssignable extends InvalidError {
  constructor() {
    super(ATTRIBUTE_MESSAGES.pickAttribute);
    this.name = "NotAssignable";
  }
}

/**
 * For a form's answer: the attribute a value is posted for is an active user attribute of the project, or the field's
 * own message (any other id). The models check again (404 for another project's or a non-user attribute).
 */
export async function assignableAttribute(scope: MemberScope, attributeId: number) {
  const row = await attributeOf(db(), scope, attributeId).catch((err: unknown) => {
    if (err instanceof NotFoundError) throw new NotAssignable();
    throw err;
  });
  if (row.type !== 3 || !row.active) throw new NotAssignable();
  return row;
}

const activeCount = async (trx: Trx, projectId: number) =>
  Number(
    (
      await trx
        .selectFrom("attributes")
        .select(sql<number>`count(*)`.as("n"))
        .where("project_id", "=", projectId)
        .where("active", "=", 1)
        .executeTakeFirstOrThrow()
    ).n,
  );

/** Is the name (compared without case) taken in the project by another attribute? */
async function nameTaken(trx: Trx, projectId: number, name: string, except?: number) {
  let q = trx
    .selectFrom("attributes")
    .select("id")
    .where("project_id", "=", projectId)
    .where(sql<string>`lower(name)`, "=", name.toLowerCase());
  if (except) q = q.where("id", "!=", except);
  return Boolean(await q.executeTakeFirst());
}

/**
 * Creates a project attribute (1 WSC imported, 2 system created, 3 user created). Active unless the project already
 * has 33 active ones (then inactive). A name taken in any case is a 409.
 */
export async function createAttribute(
  scope: ProjectScope,
  input: { name: string; code?: string; type: AttributeType; active?: boolean },
): Promise<number> {
  requireManage(scope);
  const projectId = scope.project.id;
  const now = Date.now();
  try {
    return await write(async (trx, touched) => {
      if (await nameTaken(trx, projectId, input.name)) throw new ConflictError(ATTRIBUTE_MESSAGES.exists);
      const active = input.active !== false && (await activeCount(trx, projectId)) < MAX_ACTIVE_ATTRIBUTES;
      const row = await trx
        .insertInto("attributes")
        .values({
          project_id: projectId,
          name: input.name,
          code: input.code ?? input.name,
          type: input.type,
          active: active ? 1 : 0,
          created_at: now,
          updated_at: now,
        })
        .returning("id")
        .executeTakeFirstOrThrow();
      touched.project(projectId);
      await recordAudit(
        {
          action: "attribute.created",
          ...byActor(scope.actor),
          subject: `project:${projectId}`,
          detail: { attribute: row.id, name: input.name, type: input.type },
        },
        trx,
      );
      return row.id;
    }, now);
  } catch (err) {
    if (isUniqueViolation(err)) throw new ConflictError(ATTRIBUTE_MESSAGES.exists);
    throw err;
  }
}

export interface AttributeChange {
  id: number;
  name: string;
  code: string;
  active: boolean;
}

/**
 * Saves the Manage Attributes list: the rows that differ from what is stored, in one transaction. Every id must be
 * an attribute of the project (else 404, nothing saved); names stay unique (409 naming the duplicate) and at most
 * 33 stay active (400 with the spec's message). Answers how many attributes changed (0: 'No changes made').
 */
export async function updateAttributes(scope: ProjectScope, changes: AttributeChange[]): Promise<number> {
  requireManage(scope);
  const projectId = scope.project.id;
  const ids = [...new Set(changes.map((c) => c.id))];
  if (ids.length !== changes.length) throw new InvalidError("Data format is incorrect");
  if (!ids.length) return 0;
  try {
    return await write(async (trx, touched) => {
      const stored = await trx
        .selectFrom("attributes")
        .select(["id", "name", "code", "active"])
        .where("project_id", "=", projectId)
        .where("id", "in", ids)
        .execute();
      if (stored.length !== ids.length) throw new NotFoundError("Attribute not found");
      const byId = new Map(stored.map((s) => [s.id, s]));
      const real = changes.filter((c) => {
        const s = byId.get(c.id)!;
        return s.name !== c.name || s.code !== c.code || (s.active === 1) !== c.active;
      });
      if (!real.length) return 0;
      // Names unique among the new list: compare with the project as it will be.
      const renamed = new Map(real.map((c) => [c.id, c.name.toLowerCase()]));
      const seen = new Set<string>();
      for (const c of real) {
        const key = c.name.toLowerCase();
        if (seen.has(key)) throw new ConflictError(ATTRIBUTE_MESSAGES.duplicate);
        seen.add(key);
      }
      const others = await trx.selectFrom("attributes").select(["id", "name"]).where("project_id", "=", projectId).execute();
      for (const o of others)
        if (!renamed.has(o.id) && seen.has(o.name.toLowerCase())) throw new ConflictError(ATTRIBUTE_MESSAGES.duplicate);
      const now = Date.now();
      // Two renames may swap names: park the changed rows under placeholders no valid name can be (a `~`), then
      // write them.
      for (const c of real)
        await trx
          .updateTable("attributes")
          .set({ name: `~${c.id}~`, updated_at: now })
          .where("id", "=", c.id)
          .execute();
      for (const c of real)
        await trx
          .updateTable("attributes")
          .set({ name: c.name, code: c.code, active: c.active ? 1 : 0, updated_at: now })
          .where("id", "=", c.id)
          .execute();
      if ((await activeCount(trx, projectId)) > MAX_ACTIVE_ATTRIBUTES) throw new InvalidError(ATTRIBUTE_MESSAGES.activeLimit);
      // Filters and the panel name attributes: every open grid of the project learns of it.
      touched.project(projectId);
      await touched.boardsOfProject(projectId);
      return real.length;
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw new ConflictError(ATTRIBUTE_MESSAGES.duplicate);
    throw err;
  }
}

/** Deletes a user attribute and every value of it, in one transaction; WSC and system attributes stay (400). */
export async function deleteAttribute(scope: ProjectScope, attributeId: number) {
  requireManage(scope);
  await write(async (trx, touched) => {
    const row = await attributeOf(trx, scope, attributeId);
    if (row.type !== 3) throw new InvalidError(ATTRIBUTE_MESSAGES.cannotDelete);
    const holders = trx.selectFrom("image_attribute_values").select("image_id as id").where("attribute_id", "=", attributeId);
    // Their boards in one set-based statement (an attribute may be held by a million images).
    await touched.boardsHoldingAny(holders);
    // The images that held a value are folded again without it (read first: afterwards nothing says which they were).
    touched.attributeValues(
      scope.project.id,
      (await holders.execute()).map((r) => r.id),
    );
    const values = await trx.deleteFrom("image_attribute_values").where("attribute_id", "=", attributeId).executeTakeFirst();
    await trx.deleteFrom("attributes").where("id", "=", attributeId).execute();
    touched.project(scope.project.id);
    await recordAudit(
      {
        action: "attribute.deleted",
        ...byActor(scope.actor),
        subject: `project:${scope.project.id}`,
        detail: { attribute: attributeId, name: row.name, values: Number(values.numDeletedRows) },
      },
      trx,
    );
  });
}

/**
 * Sets attribute values on images of one project (seeding, imports). Every image and attribute id must belong to
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
    touched.attributeValues(projectId, imageIds);
    await touched.boardsHolding(imageIds);
  }, now);
}

/**
 * The image panel's Assign: one value of a user attribute on one image. A value already there answers 409 'Please
 * remove existing attribute values first' unless `replace`. The image comes from the caller's resolved scope.
 */
export async function assignAttribute(
  scope: ProjectScope,
  imageId: number,
  input: { attributeId: number; value: string; replace: boolean },
) {
  requireEdit(scope);
  // Another project's or a non-user attribute is not found; a deactivated one (hidden everywhere) takes no values.
  if (!(await userAttributeOf(scope, input.attributeId)).active) throw new NotAssignable();
  const now = Date.now();
  await write(async (trx, touched) => {
    await requireLiveImage(trx, scope.project.id, imageId);
    const existing = await trx
      .selectFrom("image_attribute_values")
      .select("value")
      .where("image_id", "=", imageId)
      .where("attribute_id", "=", input.attributeId)
      .executeTakeFirst();
    if (existing && !input.replace) throw new ConflictError(ATTRIBUTE_MESSAGES.removeExisting);
    if (existing?.value === input.value) return;
    await trx
      .insertInto("image_attribute_values")
      .values({
        image_id: imageId,
        attribute_id: input.attributeId,
        value: input.value,
        created_by: recordedAs(scope.actor),
        created_at: now,
      })
      .onConflict((oc) =>
        oc.columns(["image_id", "attribute_id"]).doUpdateSet({ value: input.value, created_by: recordedAs(scope.actor), created_at: now }),
      )
      .execute();
    touched.attributeValues(scope.project.id, [imageId]);
    await touched.boardsHolding([imageId]);
  }, now);
}

/** Removes one image's value of a user attribute (the panel's typed REMOVE). False when there was none. */
export async function removeAttributeValue(scope: ProjectScope, imageId: number, attributeId: number): Promise<boolean> {
  requireEdit(scope);
  await userAttributeOf(scope, attributeId);
  return write(async (trx, touched) => {
    const gone = await trx
      .deleteFrom("image_attribute_values")
      .where("attribute_id", "=", attributeId)
      .where("image_id", "in", trx.selectFrom("images").select("id").where("id", "=", imageId).where("project_id", "=", scope.project.id))
      .executeTakeFirst();
    if (!Number(gone.numDeletedRows)) return false;
    touched.attributeValues(scope.project.id, [imageId]);
    await touched.boardsHolding([imageId]);
    return true;
  });
}

/**
 * Bulk Assign Attributes: one value of a user attribute on every selected image, set-based (INSERT … SELECT over the
 * selection). Images that hold a value already keep it and are counted as skipped, unless `replace`.
 */
export async function assignAttributeBulk(
  scope: MemberScope,
  picked: Picked,
  input: { attributeId: number; value: string; replace: boolean },
  range?: IdRange,
): Promise<{ affected: number; skipped: number }> {
  requireEdit(scope);
  // Another project's or a non-user attribute is not found; a deactivated one (hidden everywhere) takes no values.
  if (!(await userAttributeOf(scope, input.attributeId)).active) throw new NotAssignable();
  const at = Date.now();
  return write(async (trx, touched) => {
    const ids = inRange(selectedImageIds(scope, picked), range);
    // The selection as it is before the write (a filter on this attribute would see it change); a page or a job's
    // chunk, at most a few thousand ids.
    const selected = (await trx.selectFrom(ids.as("s")).select("s.id").execute()).map((r) => r.id);
    const total = selected.length;
    const holding = trx
      .selectFrom("image_attribute_values")
      .select("image_id")
      .where("attribute_id", "=", input.attributeId)
      .where("image_id", "in", ids);
    let affected: number;
    if (input.replace) {
      const updated = await trx
        .updateTable("image_attribute_values")
        .set({ value: input.value, created_by: recordedAs(scope.actor), created_at: at })
        .where("attribute_id", "=", input.attributeId)
        .where("image_id", "in", ids)
        .where("value", "!=", input.value)
        .executeTakeFirst();
      affected = Number(updated.numUpdatedRows);
    } else affected = 0;
    const inserted = await trx
      .insertInto("image_attribute_values")
      .columns(["image_id", "attribute_id", "value", "created_by", "created_at"])
      .expression(
        trx
          .selectFrom(ids.as("s"))
          .select((eb) => [
            "s.id",
            eb.val(input.attributeId).as("attribute_id"),
            eb.val(input.value).as("value"),
            sql.lit(recordedAs(scope.actor)).as("created_by"),
            sql.lit(at).as("created_at"),
          ])
          .where("s.id", "not in", holding),
      )
      .executeTakeFirst();
    affected += Number(inserted.numInsertedOrUpdatedRows ?? 0);
    if (affected) {
      touched.attributeValues(scope.project.id, selected);
      await touched.boardsHolding(selected);
    }
    return { affected, skipped: total - affected };
  }, at);
}
