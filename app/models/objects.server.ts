import { sql, type Transaction } from "kysely";
import { dialect } from "~/db/connection.server";
import type { Database } from "~/db/schema";

/**
 * Stored objects are shared by content (two uploads of the same file share an original and derivatives), so an
 * object may be removed only when no row refers to it. Writers that add references and the purge that removes
 * objects take this lock inside their transactions, so a purge never deletes an object a commit is about to use.
 * Every key of a file embeds its checksum, so the lock is per checksum: different files never wait on each other.
 * SQLite's immediate transactions already serialise writers; PostgreSQL takes a transaction-level advisory lock.
 */
export async function lockObjects(trx: Transaction<Database>, checksum: string) {
  if (dialect() === "postgres") await sql`select pg_advisory_xact_lock(hashtext(${`koala-objects:${checksum}`}))`.execute(trx);
}

/**
 * The keys among `keys` that no image or version refers to. Every key of a file embeds the file's checksum,
 * so only images with that checksum (and their versions) can still refer to them.
 */
export async function unreferencedKeys(trx: Transaction<Database>, checksum: string, keys: string[]): Promise<string[]> {
  const images = await trx.selectFrom("images").select(["id", "storage_key", "thumb_key", "preview_key"]).where("checksum", "=", checksum).execute();
  const versions = images.length
    ? await trx.selectFrom("image_versions").select(["storage_key", "thumb_key", "preview_key"]).where("image_id", "in", images.map((i) => i.id)).execute()
    : [];
  const used = new Set([...images, ...versions].flatMap((r) => [r.storage_key, r.thumb_key, r.preview_key]));
  return [...new Set(keys)].filter((k) => !used.has(k));
}
