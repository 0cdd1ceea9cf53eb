import type { Kysely, Migration } from "kysely";

/**
 * What a photo says of itself (EXIF, read on ingest): when it was taken, with what camera, and where. `taken_at` is
 * the capture time's wall clock in seconds (as if UTC), 0 when unknown, never null: the grid sorts and pages by
 * `(taken_at, id)` as it does by `(created_at, id)`, and a keyset needs no nulls (unknown sorts last, newest first).
 * The position is kept only in projects whose manager allows it (`projects.keep_gps`, off by default).
 */
export function captureData(): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .alterTable("images")
        .addColumn("taken_at", "bigint", (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema
        .alterTable("images")
        .addColumn("camera_make", "text", (c) => c.notNull().defaultTo(""))
        .execute();
      await db.schema
        .alterTable("images")
        .addColumn("camera_model", "text", (c) => c.notNull().defaultTo(""))
        .execute();
      await db.schema.alterTable("images").addColumn("gps_lat", "double precision").execute();
      await db.schema.alterTable("images").addColumn("gps_lon", "double precision").execute();
      await db.schema
        .alterTable("projects")
        .addColumn("keep_gps", "integer", (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema.createIndex("images_project_taken").on("images").columns(["project_id", "taken_at desc", "id desc"]).execute();
    },
  };
}
