import type { Kysely, Migration } from "kysely";
import type { Dialect } from "../connection.server";

/**
 * Smart search: the sentence-encoder vector of every tag (keyword) it has met, computed once when the tag first
 * shows up in a vocabulary and kept, so a query embeds only its phrase. Keyed by the folded tag; 512 float32s.
 */
export function tagVectors(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable("tag_vectors")
        .addColumn("tag", "text", (c) => c.primaryKey())
        .addColumn("vector", dialect === "postgres" ? "bytea" : "blob", (c) => c.notNull())
        .execute();
    },
  };
}
