import type { Kysely, Migration } from "kysely";

/**
 * Objects are content-addressed, so every key of an image carries its checksum: the purge of a deleted
 * image finds the images that may still share its objects through this index instead of a scan.
 */
export function objectReferences(): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema.createIndex("images_checksum").on("images").column("checksum").execute();
      // Counting a user's uploads in flight (the cap in createPendingUpload).
      await db.schema.createIndex("pending_uploads_user").on("pending_uploads").columns(["user_id", "image_id"]).execute();
    },
    async down(db: Kysely<any>) {
      await db.schema.dropIndex("pending_uploads_user").execute();
      await db.schema.dropIndex("images_checksum").execute();
    },
  };
}
