import type { Transaction } from "kysely";
import { db } from "~/db/connection.server";
import type { Database } from "~/db/schema";
import { enqueueJob } from "./jobs.server";
import { NotFoundError, recordedAs, type Actor } from "./actor";
import { getImage, type ImageMetadata, type ImageRecord } from "./images.server";
import { lockObjects } from "./objects.server";
import { assertCanEdit, nextVersion, touchProject } from "./projects.server";

export type MetadataChange = Pick<ImageMetadata, "title" | "description" | "keywords" | "ocrText">;

/** New derivatives for a rotation, made from the original by the caller before the transaction. */
export interface Rotated {
  rotation: number;
  thumbKey: string;
  previewKey: string;
}

/** An image the actor may edit (a member with editor or manager rights), or NotFoundError. */
export async function getEditableImage(actor: Actor, imageId: number): Promise<ImageRecord> {
  const image = await getImage(actor, imageId);
  await assertCanEdit(actor, image.project_id);
  return image;
}

/** What a save changes, in words kept with the version ("title", "keywords", "rotated 90°"). */
export function describeChanges(image: ImageRecord, next: MetadataChange, rotated?: Rotated): string[] {
  const changes: string[] = [];
  if (next.title !== image.title) changes.push("title");
  if (next.description !== image.description) changes.push("description");
  if (JSON.stringify(next.keywords) !== JSON.stringify(image.keywords)) changes.push("keywords");
  if (next.ocrText !== image.ocr_text) changes.push("OCR text");
  if (rotated && rotated.rotation !== image.rotation) changes.push(`rotated to ${rotated.rotation}°`);
  return changes;
}

/**
 * Saves metadata (and a rotation) as a new version: the image row and the version row change together.
 * `expectedVersion` refuses a save made from a stale form instead of silently overwriting a newer version.
 * Returns the new version number, or null when nothing changed.
 */
export async function updateImage(
  actor: Actor,
  imageId: number,
  next: MetadataChange,
  opts: { rotated?: Rotated; expectedVersion?: number; verifyObjects?: () => Promise<void> } = {},
): Promise<number | null> {
  const image = await getEditableImage(actor, imageId);
  const changes = describeChanges(image, next, opts.rotated);
  if (!changes.length) return null;
  const at = Date.now();
  const version = await db()
    .transaction()
    .execute(async (trx) => {
      await lockObjects(trx, image.checksum);
      await opts.verifyObjects?.();
      const rotation = opts.rotated?.rotation ?? image.rotation;
      const thumbKey = opts.rotated?.thumbKey ?? image.thumb_key;
      const previewKey = opts.rotated?.previewKey ?? image.preview_key;
      const updated = await trx
        .updateTable("images")
        .set({
          title: next.title,
          description: next.description,
          keywords: JSON.stringify(next.keywords),
          ocr_text: next.ocrText,
          rotation,
          thumb_key: thumbKey,
          preview_key: previewKey,
          version: (eb) => eb("version", "+", 1),
          updated_at: at,
        })
        .where("id", "=", image.id)
        .where("deleted_at", "is", null)
        .where("version", "=", opts.expectedVersion ?? image.version)
        .returning("version")
        .executeTakeFirst();
      if (!updated) throw new StaleEdit();
      await trx
        .insertInto("image_versions")
        .values({
          image_id: image.id,
          version: updated.version,
          title: next.title,
          description: next.description,
          keywords: JSON.stringify(next.keywords),
          ocr_text: next.ocrText,
          rotation,
          storage_key: image.storage_key,
          thumb_key: thumbKey,
          preview_key: previewKey,
          changes: JSON.stringify(changes),
          changed_by: recordedAs(actor),
          changed_at: at,
        })
        .execute();
      await touchBoardsOf(trx, image.id, at);
      return updated.version;
    });
  await touchProject(image.project_id, at);
  return version;
}

/** The image changed since the form was loaded. */
export class StaleEdit extends Error {
  constructor() {
    super("The image was changed by someone else. Reload it to see the latest version.");
    this.name = "StaleEdit";
  }
}

async function touchBoardsOf(trx: Transaction<Database>, imageId: number, at: number) {
  await trx
    .updateTable("boards")
    .set({ updated_at: nextVersion(at) })
    .where("id", "in", (eb) => eb.selectFrom("board_images").select("board_id").where("image_id", "=", imageId))
    .execute();
}

export const PURGE_JOB = "objects.purge";
export interface PurgePayload {
  checksum: string;
  keys: string[];
}

/**
 * Deletes an image: its row (with versions, board pins and attribute values) goes in one transaction that also
 * queues the removal of its objects; the purge job removes only objects nothing else refers to. A row never
 * outlives its objects, and an object outlives its row only until the job runs.
 */
export async function deleteImage(actor: Actor, imageId: number): Promise<{ projectId: number }> {
  const image = await getEditableImage(actor, imageId);
  const at = Date.now();
  await db()
    .transaction()
    .execute(async (trx) => {
      // Under the lock, so a rotation committing meanwhile cannot add a version whose objects this list misses.
      await lockObjects(trx, image.checksum);
      const versions = await trx.selectFrom("image_versions").select(["storage_key", "thumb_key", "preview_key"]).where("image_id", "=", image.id).execute();
      const keys = [image, ...versions].flatMap((r) => [r.storage_key, r.thumb_key, r.preview_key]);
      await touchBoardsOf(trx, image.id, at);
      const removed = await trx.deleteFrom("images").where("id", "=", image.id).executeTakeFirst();
      if (Number(removed.numDeletedRows) !== 1) throw new NotFoundError("Image not found");
      const payload: PurgePayload = { checksum: image.checksum, keys: [...new Set(keys)] };
      await enqueueJob(PURGE_JOB, payload, { maxAttempts: 20 }, trx);
    });
  await touchProject(image.project_id, at);
  return { projectId: image.project_id };
}
