import { sql } from "kysely";
import { db, dialect } from "~/db/connection.server";
import { ConflictError } from "~/lib/errors";
import { REIMPORT_JOB } from "~/lib/job-types";
import { byActor, recordAudit } from "./audit.server";
import { enqueueJob } from "./jobs.server";
import type { CaptureData } from "~/lib/capture";
import type { Similarity } from "~/lib/similarity";
import { hashColumns, lookAlikes } from "./duplicates.server";
import { queueOcrIfUnread } from "./image-ocr.server";
import { lockProjectForImages } from "./images.server";
import { assertObjectsStored, lockObjects } from "./objects.server";
import { requireManage, type ProjectScope } from "./scope.server";
import { write } from "./write.server";

/** The SQL of Re-import (spec 2: the upload page's Re-import tile): one job per project at a time, and its writes. */
export { REIMPORT_JOB };
export interface ReimportJob {
  userId: number;
  projectId: number;
  /** "wsc": the project's web source is read again; "files": derivatives and index rebuilt from the originals. */
  kind: "wsc" | "files";
}

/** Attempts a re-import job is given: each resumes where the one before stopped. */
export const REIMPORT_ATTEMPTS = 3;
export const REIMPORT_RUNNING = "A re-import of this project is already running.";

/**
 * Queues the project's re-import, unless one is queued or running (409). The check and the insert share a
 * transaction that holds the project's row (PostgreSQL) or the write lock (SQLite), so two clicks make one job.
 */
export async function queueReimport(scope: ProjectScope, kind: ReimportJob["kind"]): Promise<number> {
  requireManage(scope);
  const projectId = scope.project.id;
  return write(async (trx) => {
    if (dialect() === "postgres") await sql`select id from projects where id = ${projectId} for update`.execute(trx);
    const pending = await trx
      .selectFrom("jobs")
      .select("payload")
      .where("type", "=", REIMPORT_JOB)
      .where("status", "in", ["queued", "running"])
      .execute();
    if (pending.some((j) => (JSON.parse(j.payload) as ReimportJob).projectId === projectId)) throw new ConflictError(REIMPORT_RUNNING);
    const payload: ReimportJob = { userId: scope.actor.id, projectId, kind };
    // Retried: a worker killed mid-way leaves a checkpoint the next attempt resumes from (services/reimport.server.ts).
    const job = await enqueueJob(REIMPORT_JOB, payload, { ownerUserId: scope.actor.id, maxAttempts: REIMPORT_ATTEMPTS }, trx);
    await recordAudit({ action: "reimport.started", ...byActor(scope.actor), subject: `project:${projectId}`, detail: { job, kind } }, trx);
    return job;
  });
}

/** A page of the project's live images by id (keyset), with what re-deriving them needs. */
export async function imagesToRefresh(scope: ProjectScope, afterId: number, limit: number) {
  return db()
    .selectFrom("images")
    .select(["id", "storage_key", "checksum", "rotation", "width", "height", "mime_type", "size_bytes", "dup_of", "phash"])
    .where("project_id", "=", scope.project.id)
    .where("id", ">", afterId)
    .orderBy("id")
    .limit(limit)
    .execute();
}

/**
 * After an image's derivatives were made again: the file facts read from the original (they may have been wrong),
 * the derivative keys, checked as stored under the object lock like every write that refers to objects, and what the
 * file says of itself (its capture data and perceptual hashes: images stored before Koala read them get them here;
 * one that looks like an older image of the project becomes a possible duplicate of it, unless a person decided),
 * and the text in its picture, queued for reading if the machine has not read it (image-ocr.server.ts).
 */
export async function refreshImageFiles(
  scope: ProjectScope,
  image: { id: number; checksum: string; rotation: number; dup_of: number | null; phash: string | null },
  facts: { thumbKey: string; previewKey: string; width: number; height: number; mimeType: string; sizeBytes: number },
  read: { capture: CaptureData; similarity?: Similarity },
) {
  requireManage(scope);
  await write(async (trx, touched) => {
    await lockObjects(trx, image.checksum);
    await assertObjectsStored(trx, [facts.thumbKey, facts.previewKey]);
    const { keepGps } = await lockProjectForImages(trx, scope.project.id);
    // Only an image hashed for the first time is matched: one a person kept (Keep both) stays kept.
    const [like] =
      read.similarity && !image.phash ? await lookAlikes(trx, scope.project.id, read.similarity, { limit: 1, before: image.id }) : [];
    const changed = await trx
      .updateTable("images")
      .set({
        thumb_key: facts.thumbKey,
        preview_key: facts.previewKey,
        width: facts.width,
        height: facts.height,
        mime_type: facts.mimeType,
        size_bytes: facts.sizeBytes,
        taken_at: read.capture.takenAt,
        camera_make: read.capture.cameraMake,
        camera_model: read.capture.cameraModel,
        ...(keepGps && read.capture.gps ? { gps_lat: read.capture.gps.lat, gps_lon: read.capture.gps.lon } : {}),
        ...(read.similarity ? hashColumns(read.similarity) : {}),
        ...(like ? { dup_of: like.group } : {}),
      })
      .where("id", "=", image.id)
      .where("project_id", "=", scope.project.id)
      // Turned meanwhile: the turn made its own derivatives; these (of the old rotation) are not its.
      .where("rotation", "=", image.rotation)
      .where((eb) =>
        eb.or([
          eb("thumb_key", "!=", facts.thumbKey),
          eb("preview_key", "!=", facts.previewKey),
          eb("width", "!=", facts.width),
          eb("height", "!=", facts.height),
          eb("mime_type", "!=", facts.mimeType),
          eb("size_bytes", "!=", facts.sizeBytes),
          eb("taken_at", "!=", read.capture.takenAt),
          eb("camera_make", "!=", read.capture.cameraMake),
          eb("camera_model", "!=", read.capture.cameraModel),
          ...(read.similarity ? [eb("phash", "is", null), eb("phash", "!=", read.similarity.phash)] : []),
          ...(keepGps ? [eb("gps_lat", "is", null)] : []),
        ]),
      )
      .executeTakeFirst();
    if (Number(changed.numUpdatedRows)) {
      touched.project(scope.project.id);
      await touched.boardsHolding([image.id]);
    }
    await queueOcrIfUnread(trx, image.id, facts.previewKey);
  });
}

/**
 * Rebuilds the search index rows of these images: naming the indexed columns in an UPDATE fires the index
 * triggers (FTS5 on SQLite: the row's entry deleted and written again; PostgreSQL: its tsvector recomputed).
 */
export async function reindexImages(scope: ProjectScope, ids: number[]) {
  if (!ids.length) return;
  requireManage(scope);
  await write(async (trx, touched) => {
    await trx
      .updateTable("images")
      .set((eb) => ({
        title: eb.ref("title"),
        description: eb.ref("description"),
        keywords: eb.ref("keywords"),
        ocr_text: eb.ref("ocr_text"),
        original_name: eb.ref("original_name"),
      }))
      .where("project_id", "=", scope.project.id)
      .where("id", "in", ids)
      .execute();
    // What a search finds may change: cached totals and ETags follow the version.
    touched.project(scope.project.id);
    await touched.boardsHolding(ids);
  });
}

/** The project's live image holding this file, if any (a WSC re-import finds duplicates by checksum). */
export async function imageWithChecksum(scope: ProjectScope, checksum: string) {
  return db()
    .selectFrom("images")
    .selectAll()
    .where("project_id", "=", scope.project.id)
    .where("checksum", "=", checksum)
    .orderBy("id")
    .executeTakeFirst();
}
