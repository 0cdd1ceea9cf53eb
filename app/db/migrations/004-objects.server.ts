import { sql, type Kysely, type Migration } from "kysely";
import type { Dialect } from "../connection.server";

/**
 * The stored objects, so that the checks a write makes under the database's lock are row lookups rather than
 * storage calls (app/models/objects.server.ts). Existing images' and versions' keys are recorded as stored.
 */
export function objectsTable(dialect: Dialect): Migration {
  const time = dialect === "postgres" ? "bigint" : "integer";
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable("objects")
        .addColumn("key", "text", (c) => c.primaryKey())
        .addColumn("checksum", "text", (c) => c.notNull())
        .addColumn("status", "text", (c) => c.notNull().check(sql`status in ('stored','purging')`))
        .addColumn("updated_at", time, (c) => c.notNull())
        .execute();
      await db.schema.createIndex("objects_purging").on("objects").columns(["status", "updated_at"]).execute();
      const now = Date.now();
      for (const column of ["storage_key", "thumb_key", "preview_key"])
        for (const table of ["images", "image_versions"]) {
          const checksum =
            table === "images" ? sql.ref("checksum") : sql`(select checksum from images where images.id = image_versions.image_id)`;
          await sql`insert into objects (key, checksum, status, updated_at)
            select distinct ${sql.ref(column)}, ${checksum}, 'stored', ${sql.lit(now)} from ${sql.table(table)} where ${checksum} is not null
            on conflict (key) do nothing`.execute(db);
        }
    },
    async down(db: Kysely<any>) {
      await db.schema.dropTable("objects").execute();
    },
  };
}
