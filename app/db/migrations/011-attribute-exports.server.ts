import type { Kysely, Migration } from "kysely";
import type { Dialect } from "../connection.server";

/**
 * Attribute exports too large to attach to their e-mail: the stored CSV, whose it is, and until when its link works
 * (housekeeping removes the row and the object after that). The id is the SHA-256 of the link's random token.
 */
export function attributeExports(dialect: Dialect): Migration {
  const time = dialect === "postgres" ? "bigint" : "integer";
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable("attribute_exports")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("user_id", "integer", (c) => c.notNull().references("users.id").onDelete("cascade"))
        .addColumn("project_id", "integer", (c) => c.notNull().references("projects.id").onDelete("cascade"))
        .addColumn("storage_key", "text", (c) => c.notNull())
        .addColumn("file_name", "text", (c) => c.notNull())
        .addColumn("size_bytes", time, (c) => c.notNull())
        .addColumn("created_at", time, (c) => c.notNull())
        .addColumn("expires_at", time, (c) => c.notNull())
        .execute();
      await db.schema.createIndex("attribute_exports_expiry").on("attribute_exports").column("expires_at").execute();
    },
  };
}
