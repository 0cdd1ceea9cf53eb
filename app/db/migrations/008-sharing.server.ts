import type { Kysely, Migration } from "kysely";
import type { Dialect } from "../connection.server";

/**
 * Share links per recipient (options, counts, last opened) and the client review loop: marks and comments a
 * link's visitors leave on images, and when a board's owner last got the digest of them.
 */
export function sharing(dialect: Dialect): Migration {
  const pg = dialect === "postgres";
  const time = pg ? "bigint" : "integer";
  return {
    async up(db: Kysely<any>) {
      for (const [column, type, def] of [
        ["recipient", "text", null],
        ["label", "text", null],
        ["allow_download", "integer", 1],
        ["show_metadata", "integer", 1],
        ["last_opened_at", time, null],
        ["views", "integer", 0],
        ["downloads", "integer", 0],
      ] as const)
        await db.schema
          .alterTable("share_links")
          .addColumn(column, type, (c) => (def === null ? c : c.notNull().defaultTo(def)))
          .execute();
      await db.schema.createIndex("share_links_board").on("share_links").column("board_id").execute();

      const table = db.schema.createTable("share_reviews");
      await (
        pg
          ? table.addColumn("id", "integer", (c) => c.primaryKey().generatedByDefaultAsIdentity())
          : table.addColumn("id", "integer", (c) => c.primaryKey().autoIncrement())
      )
        .addColumn("link_id", "integer", (c) => c.notNull().references("share_links.id").onDelete("cascade"))
        .addColumn("image_id", "integer", (c) => c.notNull().references("images.id").onDelete("cascade"))
        .addColumn("visitor_key", "text", (c) => c.notNull())
        .addColumn("visitor_name", "text", (c) => c.notNull())
        .addColumn("mark", "text")
        .addColumn("comment", "text")
        .addColumn("created_at", time, (c) => c.notNull())
        .addColumn("updated_at", time, (c) => c.notNull())
        .addUniqueConstraint("share_reviews_visitor_image", ["link_id", "visitor_key", "image_id"])
        .execute();
      await db.schema.createIndex("share_reviews_image").on("share_reviews").columns(["image_id", "updated_at"]).execute();
      await db.schema.alterTable("boards").addColumn("review_digest_at", time).execute();
    },
    async down(db: Kysely<any>) {
      await db.schema.alterTable("boards").dropColumn("review_digest_at").execute();
      await db.schema.dropTable("share_reviews").execute();
      await db.schema.dropIndex("share_links_board").execute();
      for (const column of ["downloads", "views", "last_opened_at", "show_metadata", "allow_download", "label", "recipient"])
        await db.schema.alterTable("share_links").dropColumn(column).execute();
    },
  };
}
