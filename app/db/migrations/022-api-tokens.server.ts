import type { Kysely, Migration } from "kysely";
import type { Dialect } from "../connection.server";

/**
 * Personal access tokens for the public API (`/api/v1`): a person's named token, kept only as the SHA-256 of its
 * secret, reading only or also writing, over all of the person's projects or the ones listed (JSON array of ids),
 * until it expires or is revoked; when and from where it was last used.
 */
export function apiTokens(dialect: Dialect): Migration {
  const pg = dialect === "postgres";
  const time = pg ? "bigint" : "integer";
  return {
    async up(db: Kysely<any>) {
      const table = db.schema.createTable("api_tokens");
      await (
        pg
          ? table.addColumn("id", "integer", (c) => c.primaryKey().generatedByDefaultAsIdentity())
          : table.addColumn("id", "integer", (c) => c.primaryKey().autoIncrement())
      )
        .addColumn("user_id", "integer", (c) => c.notNull().references("users.id").onDelete("cascade"))
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("token_hash", "text", (c) => c.notNull().unique())
        .addColumn("can_write", "integer", (c) => c.notNull())
        .addColumn("projects", "text")
        .addColumn("expires_at", time, (c) => c.notNull())
        .addColumn("created_at", time, (c) => c.notNull())
        .addColumn("last_used_at", time)
        .addColumn("last_used_ip", "text")
        .addColumn("revoked_at", time)
        .execute();
      await db.schema.createIndex("api_tokens_user").on("api_tokens").columns(["user_id", "created_at"]).execute();
    },
  };
}
