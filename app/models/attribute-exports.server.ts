import { db } from "~/db/connection.server";
import { sha256 } from "~/lib/crypto.server";

/**
 * Attribute exports sent as a link (too large to attach). The row's id is the sha256 of the link's token, so the
 * table alone opens nothing; a link works only for the person it was made for, until it expires.
 */
export async function recordExport(input: {
  token: string;
  userId: number;
  projectId: number;
  storageKey: string;
  fileName: string;
  sizeBytes: number;
  expiresAt: number;
}) {
  await db()
    .insertInto("attribute_exports")
    .values({
      id: sha256(input.token),
      user_id: input.userId,
      project_id: input.projectId,
      storage_key: input.storageKey,
      file_name: input.fileName,
      size_bytes: input.sizeBytes,
      created_at: Date.now(),
      expires_at: input.expiresAt,
    })
    .execute();
}

/** The export behind a link, for the person it was made for and only until it expires; else null (a 404). */
export async function exportFor(userId: number, token: string) {
  if (!/^[\w-]{20,100}$/.test(token)) return null;
  const row = await db()
    .selectFrom("attribute_exports")
    .select(["storage_key", "file_name", "size_bytes", "expires_at", "user_id", "project_id"])
    .where("id", "=", sha256(token))
    .executeTakeFirst();
  return row && row.user_id === userId && Number(row.expires_at) > Date.now() ? row : null;
}

/** Exports whose links have expired (housekeeping deletes their files, then the rows). */
export const expiredExports = (now = Date.now(), limit = 500) =>
  db().selectFrom("attribute_exports").select(["id", "storage_key"]).where("expires_at", "<=", now).limit(limit).execute();

export const forgetExport = (id: string) => db().deleteFrom("attribute_exports").where("id", "=", id).execute();
