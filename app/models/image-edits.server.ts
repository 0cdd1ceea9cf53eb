import { ConflictError, NotFoundError } from "~/lib/errors";
import { PURGE_JOB } from "~/lib/job-types";
import { recordedAs } from "./actor";
import { byActor, recordAudit } from "./audit.server";
import { regroupCopiesOf } from "./duplicates.server";
import { imagesByIds, lockProjectForImages, parseImage, type ImageLike, type ImageMetadata, type ImageRecord } from "./images.server";
import { machineMayWrite, queueOcr, rebaseOverMachineReads } from "./image-ocr.server";
import { enqueueJob } from "./jobs.server";
import { assertObjectsStored, lockObjects } from "./objects.server";
import { requireEdit, type ProjectScope } from "./scope.server";
import { refreshCover } from "./boards.server";
import { write } from "./write.server";

export type MetadataChange = Pick<ImageMetadata, "title" | "description" | "keywords" | "ocrText">;

/** New derivatives for a rotation, made from the original by the caller before the transaction. */
export interface Rotated {
  rotation: number;
  thumbKey: string;
  previewKey: string;
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

/** The image changed since the form was loaded. */
export class StaleEdit extends ConflictError {
  constructor() {
    super("The image was changed by someone else. Reload it to see the latest version.");
    this.name = "StaleEdit";
  }
}

/**
 * Saves metadata (and a rotation) as a new version: the image row and the version row change together.
 * `expectedVersion` refuses a save made from a stale form instead of silently overwriting a newer version.
 * Returns the new version number, or null when nothing changed.
 */
export async function updateImage(
  scope: ProjectScope,
  row: ImageLike,
  next: MetadataChange,
  opts: { rotated?: Rotated; expectedVersion?: number } = {},
): Promise<number | null> {
  requireEdit(scope);
  try {
    return await saveVersion(scope, parseImage(row), next, opts);
  } catch (err) {
    // A machine's reading (OCR) saved between this save's read of the image and its write moved the version on (on
    // PostgreSQL the two could also deadlock, and the write run again found it so). Read once more: over readings
    // alone the save is rebased, as it is when its form is older than the row; over a person's change it is stale.
    if (!(err instanceof StaleEdit)) throw err;
    const [now] = await imagesByIds(scope, [row.id]);
    if (!now) throw new NotFoundError("Image not found"); // deleted meanwhile
    if (now.version === row.version) throw err;
    return saveVersion(scope, now, next, { ...opts, expectedVersion: opts.expectedVersion ?? row.version });
  }
}

async function saveVersion(
  scope: ProjectScope,
  image: ImageRecord,
  next: MetadataChange,
  opts: { rotated?: Rotated; expectedVersion?: number },
) {
  const rebased = await rebaseOverMachineReads(image, next, opts.expectedVersion);
  next = rebased.next;
  const changes = describeChanges(image, next, opts.rotated);
  if (!changes.length) return null;
  // The text stays the machine's while a save leaves it as it was; a person's change makes it theirs.
  const ocrByMachine = next.ocrText === image.ocr_text ? image.ocr_by_machine : 0;
  const at = Date.now();
  return write(async (trx, touched) => {
    await lockObjects(trx, image.checksum);
    if (opts.rotated) await assertObjectsStored(trx, [opts.rotated.thumbKey, opts.rotated.previewKey]);
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
        ocr_by_machine: ocrByMachine,
        rotation,
        thumb_key: thumbKey,
        preview_key: previewKey,
        version: (eb) => eb("version", "+", 1),
        updated_at: at,
      })
      .where("id", "=", image.id)
      .where("version", "=", rebased.expectedVersion ?? image.version)
      // The original as it is now: the positions job may have swapped it since `row` was read (image-positions.server.ts).
      .returning(["version", "storage_key"])
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
        storage_key: updated.storage_key,
        thumb_key: thumbKey,
        preview_key: previewKey,
        changes: JSON.stringify(changes),
        changed_by: recordedAs(scope.actor),
        changed_at: at,
      })
      .execute();
    // A turned picture is read again, upright, unless a person wrote the text.
    if (opts.rotated && machineMayWrite({ ocr_text: next.ocrText, ocr_by_machine: ocrByMachine })) await queueOcr(trx, image.id);
    touched.project(image.project_id);
    await touched.boardsHolding([image.id]);
    return updated.version;
  }, at);
}

export interface PurgePayload {
  checksum: string;
  keys: string[];
}

/**
 * Deletes an image: its row (with versions, board pins and attribute values) goes in one transaction that also
 * queues the removal of its objects; the purge job removes only objects nothing else refers to. A row never
 * outlives its objects, and an object outlives its row only until the job runs.
 */
export async function deleteImage(scope: ProjectScope, image: ImageLike, expectedVersion?: number): Promise<void> {
  requireEdit(scope);
  await write(async (trx, touched) => {
    // Under the lock, so a rotation committing meanwhile cannot add a version whose objects this list misses.
    await lockObjects(trx, image.checksum);
    // And the project's, as uploads take it (in this order): an upload joining this image's group of possible
    // duplicates, or another delete regrouping it, waits for this one and sees it done (regroupCopiesOf below).
    await lockProjectForImages(trx, image.project_id);
    const versions = await trx
      .selectFrom("image_versions")
      .select(["storage_key", "thumb_key", "preview_key"])
      .where("image_id", "=", image.id)
      .execute();
    const keys = [image, ...versions].flatMap((r) => [r.storage_key, r.thumb_key, r.preview_key]);
    touched.project(image.project_id);
    await touched.boardsHolding([image.id]);
    let removal = trx.deleteFrom("images").where("id", "=", image.id);
    // A delete asked of one version (the API's If-Match) does not take a newer one: an edit committed meanwhile wins.
    if (expectedVersion !== undefined) removal = removal.where("version", "=", expectedVersion);
    const removed = await removal.executeTakeFirst();
    if (Number(removed.numDeletedRows) !== 1) {
      if (expectedVersion !== undefined && (await trx.selectFrom("images").select("id").where("id", "=", image.id).executeTakeFirst()))
        throw new StaleEdit();
      throw new NotFoundError("Image not found");
    }
    await regroupCopiesOf(trx, image.project_id, [image.id]);
    for (const board of touched.boards) await refreshCover(trx, board);
    const payload: PurgePayload = { checksum: image.checksum, keys: [...new Set(keys)] };
    await enqueueJob(PURGE_JOB, payload, { maxAttempts: 20 }, trx);
    // The row is gone for good: the log says who took it, and what it was.
    await recordAudit(
      {
        action: "images.deleted",
        ...byActor(scope.actor),
        subject: `project:${image.project_id}`,
        detail: { count: 1, ids: String(image.id), title: image.title },
      },
      trx,
    );
  });
}
