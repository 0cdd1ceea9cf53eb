import type { ExpressionBuilder } from "kysely";
import { config } from "~/config.server";
import { db } from "~/db/connection.server";
import type { Database } from "~/db/schema";
import { ConflictError } from "~/lib/errors";
import { OCR_JOB } from "~/lib/job-types";
import { enqueueJob } from "./jobs.server";
import { requireEdit, type ProjectScope } from "./scope.server";
import { write, type Trx } from "./write.server";

/**
 * The OCR text Koala reads from the picture (services/ocr.server.ts): it fills the field only when it is empty or
 * already the machine's (`ocr_by_machine`); a person's text is never overwritten. Each reading that changes the text
 * is a version of the image, by no one, "OCR text read".
 */

export const MACHINE_READ = "OCR text read by Koala";

export interface OcrPayload {
  imageId: number;
}

/** What the OCR job needs of an image: which picture to read, and whether it may write. */
export interface OcrTarget {
  id: number;
  project_id: number;
  preview_key: string;
  ocr_text: string;
  ocr_by_machine: number;
}

/** The machine may fill the field: it is empty, or the machine's own. */
export const machineMayWrite = (image: Pick<OcrTarget, "ocr_text" | "ocr_by_machine">) =>
  image.ocr_text === "" || image.ocr_by_machine === 1;

/** The same rule in a statement on `images`. */
const machineMayWriteRow = (eb: ExpressionBuilder<Database, "images">) => eb.or([eb("ocr_text", "=", ""), eb("ocr_by_machine", "=", 1)]);

export async function ocrTarget(imageId: number): Promise<OcrTarget | undefined> {
  return db()
    .selectFrom("images")
    .select(["id", "project_id", "preview_key", "ocr_text", "ocr_by_machine"])
    .where("id", "=", imageId)
    .executeTakeFirst();
}

/**
 * Inside a write: the image's text is read in the background once the write commits (OCR on; the job is in the same
 * transaction, so a rolled-back image is never read).
 */
export async function queueOcr(trx: Trx, imageId: number) {
  if (config().ocr) await enqueueJob(OCR_JOB, { imageId } satisfies OcrPayload, { maxAttempts: 3 }, trx);
}

/**
 * Inside a files re-import's write: the image's picture is read if the machine has not read it as it now is and the
 * field is the machine's to fill: an empty field never marked as read (stored before Koala read text, or its reading
 * failed), or a picture other than the one last read (turned since, and that reading failed). Machine text with no
 * mark was read before the mark existed (migration 029), in this picture. A reading already queued for it (an
 * upload's, moments ago) may make this a second one, which writes nothing: looking for it would scan the queue once
 * per image, and a re-import queues one per image.
 */
export async function queueOcrIfUnread(trx: Trx, imageId: number, previewKey: string) {
  if (!config().ocr) return;
  const unread = await trx
    .selectFrom("images")
    .select("id")
    .where("id", "=", imageId)
    .where("preview_key", "=", previewKey)
    .where((eb) =>
      eb.or([
        eb.and([eb("ocr_read_key", "is", null), eb("ocr_text", "=", "")]),
        eb.and([eb("ocr_read_key", "!=", previewKey), machineMayWriteRow(eb)]),
      ]),
    )
    .executeTakeFirst();
  if (unread) await queueOcr(trx, imageId);
}

/**
 * "Read text again" (an editor, in the panel): queued when the field is empty or the machine's. A person's text
 * stays; they clear it first.
 */
export async function requestOcr(scope: ProjectScope, image: OcrTarget) {
  requireEdit(scope);
  if (!config().ocr) throw new ConflictError("Reading text from pictures is turned off here (OCR=off).");
  if (!machineMayWrite(image))
    throw new ConflictError("The OCR text was written by a person, so Koala leaves it. Clear it first to have the picture read again.");
  // A reading already waiting (or running) will do: asking again queues no more work. Looked for inside the write,
  // which SQLite makes one at a time (on PostgreSQL two asked at the same instant may both queue one).
  await write(async (trx) => {
    if (!(await readingPending(trx, image.id))) await queueOcr(trx, image.id);
  });
}

/** Whether a reading of the image is queued or running (a done job's payload is dropped, so only these match). */
async function readingPending(trx: Trx, imageId: number) {
  const row = await trx
    .selectFrom("jobs")
    .select("id")
    .where("type", "=", OCR_JOB)
    .where("status", "in", ["queued", "running"])
    .where("payload", "=", JSON.stringify({ imageId } satisfies OcrPayload))
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Saves the text read from `target`'s picture as a new version, if the image is still as the reading found it: the
 * same text, still the machine's or empty (no person wrote or cleared it meanwhile), the same picture (not turned
 * since); and the text differs. Returns the new version, or null when nothing was written. Either way the picture,
 * if still the image's and its field still the machine's or empty, is marked as read (`ocr_read_key`), so that a
 * re-import does not read it again.
 */
export async function saveMachineText(target: OcrTarget, text: string): Promise<number | null> {
  const at = Date.now();
  return write(async (trx, touched) => {
    const image = await trx
      .updateTable("images")
      .set({
        ocr_text: text,
        ocr_by_machine: 1,
        ocr_read_key: target.preview_key,
        version: (eb) => eb("version", "+", 1),
        updated_at: at,
      })
      .where("id", "=", target.id)
      .where("preview_key", "=", target.preview_key)
      .where("ocr_text", "=", target.ocr_text)
      .where("ocr_by_machine", "=", target.ocr_by_machine)
      .where(machineMayWriteRow)
      .where("ocr_text", "!=", text)
      .returningAll()
      .executeTakeFirst();
    if (!image) {
      // Nothing new (the same text, or none): marked as read, which no page shows, so no version moves. Not when a
      // person wrote text meanwhile: the reading was not theirs to keep, and if they clear it, a re-import reads it.
      await trx
        .updateTable("images")
        .set({ ocr_read_key: target.preview_key })
        .where("id", "=", target.id)
        .where("preview_key", "=", target.preview_key)
        .where(machineMayWriteRow)
        .execute();
      return null;
    }
    await trx
      .insertInto("image_versions")
      .values({
        image_id: image.id,
        version: image.version,
        title: image.title,
        description: image.description,
        keywords: image.keywords,
        ocr_text: text,
        rotation: image.rotation,
        storage_key: image.storage_key,
        thumb_key: image.thumb_key,
        preview_key: image.preview_key,
        changes: JSON.stringify([MACHINE_READ]),
        changed_by: null,
        changed_at: at,
      })
      .execute();
    touched.project(image.project_id);
    await touched.boardsHolding([image.id]);
    return image.version;
  }, at);
}

/**
 * A person's save from a form loaded at `expectedVersion`, when the only versions since are the machine's readings:
 * saved over the current version instead of refused as stale (a reading is no one's edit to conflict with). An OCR
 * field left as the person saw it keeps the machine's text; one they changed is theirs, as always.
 */
export async function rebaseOverMachineReads<C extends { ocrText: string }>(
  image: { id: number; version: number; ocr_text: string },
  next: C,
  expectedVersion: number | undefined,
): Promise<{ next: C; expectedVersion: number | undefined }> {
  const unchanged = { next, expectedVersion };
  if (expectedVersion === undefined || expectedVersion >= image.version) return unchanged;
  const since = await db()
    .selectFrom("image_versions")
    .select(["version", "changes", "ocr_text"])
    .where("image_id", "=", image.id)
    .where("version", ">=", expectedVersion)
    .orderBy("version")
    .execute();
  const [base, ...later] = since;
  if (base?.version !== expectedVersion || !later.length) return unchanged;
  if (!later.every((v) => v.changes === JSON.stringify([MACHINE_READ]))) return unchanged;
  const ocrText = next.ocrText === base.ocr_text ? image.ocr_text : next.ocrText;
  return { next: { ...next, ocrText }, expectedVersion: image.version };
}
