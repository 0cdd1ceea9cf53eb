import { sql, type Kysely, type Migration } from "kysely";

/**
 * Two columns nothing ever set: `images.deleted_at` (images are deleted outright; every query filtered on a null
 * that never changed) and `boards.active` (never cleared, so the filters on it kept every board). Dropped, and the
 * two partial indexes whose predicate was `deleted_at is null` made again over every row, so the grid's keyset and
 * the bulk actions' id walk keep an index of their own.
 */
export function dropUnusedColumns(): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema.dropIndex("images_project_keyset").execute();
      await db.schema.dropIndex("images_project_id").execute();
      await db.schema.alterTable("images").dropColumn("deleted_at").execute();
      await db.schema.alterTable("boards").dropColumn("active").execute();
      await db.schema.createIndex("images_project_keyset").on("images").columns(["project_id", "created_at desc", "id desc"]).execute();
      await db.schema.createIndex("images_project_id").on("images").columns(["project_id", "id"]).execute();
      await sql`analyze`.execute(db);
    },
  };
}
