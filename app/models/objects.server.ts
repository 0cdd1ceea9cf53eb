import { sql } from "kysely";
import { db, dialect } from "~/db/connection.server";
import { HttpError } from "~/lib/errors";
import { gridThumbKey, thumbOfGridKey } from "~/lib/media";
import type { Trx } from "./write.server";

/**
 * Stored objects are shared by content (two uploads of the same file share an original and derivatives), so an
 * object may be removed only when no row refers to it. The `objects` table records every object that is (or is
 * being) stored, so that the checks made under the database's lock are row lookups, never storage I/O:
 *
 * - a writer first **claims** its keys (a row `stored`), then writes the bytes, then, in its transaction and under
 *   the object lock, checks the rows are still `stored` before committing a row that refers to them;
 * - a purge marks unreferenced keys `purging` under the same lock and commits, deletes the bytes outside any
 *   transaction, then forgets the rows. A writer meeting a `purging` key waits until it is gone and stores it anew.
 *
 * So a committed image never refers to an object whose bytes a purge is about to delete. The lock is per checksum
 * (every key embeds it): PostgreSQL takes a transaction-level advisory lock; SQLite's immediate transactions
 * already serialise writers.
 */
export async function lockObjects(trx: Trx, checksum: string) {
  if (dialect() === "postgres") await sql`select pg_advisory_xact_lock(hashtext(${`koala-objects:${checksum}`}))`.execute(trx);
}

/** An object a write meant to refer to is gone (a purge took it): the write starts over. */
export class ObjectMissing extends Error {
  constructor(key: string) {
    super(`Stored object missing: ${key}`);
    this.name = "ObjectMissing";
  }
}

const WAIT_MS = 100;
const MAX_WAIT_MS = 15_000;

/**
 * Before writing bytes: records the keys as `stored`. When a purge of one of them is under way, waits for it to
 * finish first (its bytes are about to be deleted), so the bytes written next are never deleted by it.
 */
export async function claimObjects(checksum: string, keys: string[]) {
  const deadline = Date.now() + MAX_WAIT_MS;
  for (;;) {
    const now = Date.now();
    await db()
      .insertInto("objects")
      .values(keys.map((key) => ({ key, checksum, status: "stored" as const, updated_at: now })))
      .onConflict((oc) => oc.column("key").doNothing())
      .execute();
    const purging = await db().selectFrom("objects").select("key").where("key", "in", keys).where("status", "=", "purging").execute();
    if (!purging.length) return;
    if (Date.now() > deadline) throw new HttpError(503, "The image store is busy. Please try again in a moment.", { "Retry-After": "5" });
    await new Promise((r) => setTimeout(r, WAIT_MS));
  }
}

/** Under the object lock: every key is recorded as stored, or ObjectMissing. */
export async function assertObjectsStored(trx: Trx, keys: string[]) {
  const wanted = [...new Set(keys)];
  const rows = await trx.selectFrom("objects").select("key").where("key", "in", wanted).where("status", "=", "stored").execute();
  if (rows.length !== wanted.length) {
    const present = new Set(rows.map((r) => r.key));
    throw new ObjectMissing(wanted.find((k) => !present.has(k))!);
  }
}

/**
 * Under the object lock: the keys among `keys` (and each thumbnail's grid thumbnail) that no image or version refers to are marked `purging` (keys a
 * previous purge left `purging` are taken up again) and returned; their bytes may then be deleted.
 */
export async function markUnreferenced(trx: Trx, checksum: string, keys: string[]): Promise<string[]> {
  const images = await trx
    .selectFrom("images")
    .select(["id", "storage_key", "thumb_key", "preview_key"])
    .where("checksum", "=", checksum)
    .execute();
  const versions = images.length
    ? await trx
        .selectFrom("image_versions")
        .select(["storage_key", "thumb_key", "preview_key"])
        .where(
          "image_id",
          "in",
          images.map((i) => i.id),
        )
        .execute()
    : [];
  // A thumbnail's grid thumbnail (lib/media.ts) goes and stays with it: rows name only the thumbnail.
  const used = new Set([...images, ...versions].flatMap((r) => [r.storage_key, r.thumb_key, gridThumbKey(r.thumb_key), r.preview_key]));
  const named = keys.flatMap((k) => (k.startsWith("thumbs/") && !thumbOfGridKey(k) ? [k, gridThumbKey(k)] : [k]));
  const unused = [...new Set(named)].filter((k) => !used.has(k));
  if (!unused.length) return [];
  await trx.updateTable("objects").set({ status: "purging", updated_at: Date.now() }).where("key", "in", unused).execute();
  return unused;
}

/** After the bytes are deleted: the rows of purged keys go (a writer waiting on them may then store them anew). */
export async function forgetObjects(keys: string[]) {
  if (keys.length) await db().deleteFrom("objects").where("key", "in", keys).where("status", "=", "purging").execute();
}

/** Purges that stopped half-way (a crash between marking and forgetting): resumed by housekeeping. */
export async function stalledPurges(olderThanMs = 10 * 60_000, limit = 500): Promise<string[]> {
  const rows = await db()
    .selectFrom("objects")
    .select("key")
    .where("status", "=", "purging")
    .where("updated_at", "<", Date.now() - olderThanMs)
    .limit(limit)
    .execute();
  return rows.map((r) => r.key);
}
