import { sql, type Kysely, type Migration } from "kysely";

/**
 * Near-duplicates (services/similarity.server.ts): an image's perceptual hashes as 16 hex digits (`phash`, a DCT
 * hash; `dhash`, a gradient hash), null for images stored before them; the DCT hash's four 16-bit quarters
 * (`ph0`…`ph3`), each indexed with the project, so that a lookup seeks the quarters near a new image's instead of
 * comparing every image of the project (multi-index hashing); and `dup_of`, the image an upload looked like when it
 * came in, until a person decides (Keep both clears it; a deleted look-alike leaves it pointing nowhere, which every
 * reader's join drops).
 */
export function nearDuplicates(): Migration {
  return {
    async up(db: Kysely<any>) {
      for (const column of ["phash", "dhash"]) await db.schema.alterTable("images").addColumn(column, "text").execute();
      for (const band of [0, 1, 2, 3]) {
        await db.schema.alterTable("images").addColumn(`ph${band}`, "integer").execute();
        await db.schema
          .createIndex(`images_project_ph${band}`)
          .on("images")
          .columns(["project_id", `ph${band}`])
          .execute();
      }
      // No foreign key: an upload must not fail because its look-alike was deleted while it came in; every reader
      // joins the look-alike, so a deleted one is simply no longer there.
      await db.schema.alterTable("images").addColumn("dup_of", "integer").execute();
      await db.schema
        .createIndex("images_project_dups")
        .on("images")
        .columns(["project_id", "id desc"])
        .where(sql.ref("dup_of"), "is not", null)
        .execute();
    },
  };
}
