import type { Transaction } from "kysely";
import { db } from "~/db/connection.server";
import type { Database } from "~/db/schema";
import { NotFoundError, TooManyRequestsError } from "~/lib/errors";
import { requireEdit, type ProjectScope } from "./scope.server";

/** A signed upload URL is good for 15 minutes; its pending record (and the right to register it) for an hour. */
export const UPLOAD_URL_TTL_SECONDS = 15 * 60;
export const PENDING_UPLOAD_TTL_MS = 60 * 60_000;

export interface PendingUpload {
  key: string;
  projectId: number;
  fileName: string;
  /** Set once registered: registering the same key again answers with this image. */
  imageId: number | null;
}

/** Uploads one user may have signed and not yet registered at once: enough for any real batch, not for a flood. */
export const MAX_PENDING_UPLOADS = 1000;

export class TooManyUploads extends TooManyRequestsError {
  constructor() {
    super(`More than ${MAX_PENDING_UPLOADS} uploads are in progress; finish or wait for them before starting more.`);
    this.name = "TooManyUploads";
  }
}

/** Records that the actor may PUT one file to `key` for a project they can edit. */
export async function createPendingUpload(scope: ProjectScope, key: string, fileName: string, now = Date.now()) {
  requireEdit(scope);
  const { actor } = scope;
  const projectId = scope.project.id;
  const { n } = await db()
    .selectFrom("pending_uploads")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("user_id", "=", actor.id)
    .where("image_id", "is", null)
    .where("expires_at", ">", now)
    .executeTakeFirstOrThrow();
  if (Number(n) >= MAX_PENDING_UPLOADS) throw new TooManyUploads();
  await db()
    .insertInto("pending_uploads")
    .values({
      key,
      user_id: actor.id,
      project_id: projectId,
      file_name: fileName,
      created_at: now,
      expires_at: now + PENDING_UPLOAD_TTL_MS,
      image_id: null,
    })
    .execute();
}

/**
 * The actor's own pending upload for a project. Another user's key, another project, or an expired and never
 * registered upload answers like a key that never existed.
 */
export async function getPendingUpload(scope: ProjectScope, key: string): Promise<PendingUpload> {
  requireEdit(scope);
  const { actor } = scope;
  const projectId = scope.project.id;
  const row = await db()
    .selectFrom("pending_uploads")
    .select(["key", "project_id", "file_name", "image_id", "expires_at"])
    .where("key", "=", key)
    .where("user_id", "=", actor.id)
    .where("project_id", "=", projectId)
    .executeTakeFirst();
  if (!row || (row.image_id === null && row.expires_at < Date.now())) throw new NotFoundError("Upload not found");
  return { key: row.key, projectId: row.project_id, fileName: row.file_name, imageId: row.image_id };
}

/** Marks a pending upload as registered; false when another request registered it first. */
export async function claimPendingUpload(trx: Transaction<Database>, key: string, imageId: number): Promise<boolean> {
  const result = await trx
    .updateTable("pending_uploads")
    .set({ image_id: imageId })
    .where("key", "=", key)
    .where("image_id", "is", null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Pending uploads past their expiry, registered or not: their upload objects can go, and then the records. */
export async function expiredPendingUploads(now = Date.now(), limit = 500): Promise<string[]> {
  const rows = await db()
    .selectFrom("pending_uploads")
    .select("key")
    .where("expires_at", "<", now)
    .orderBy("expires_at")
    .limit(limit)
    .execute();
  return rows.map((r) => r.key);
}

export async function deletePendingUploads(keys: string[]) {
  if (keys.length) await db().deleteFrom("pending_uploads").where("key", "in", keys).execute();
}
