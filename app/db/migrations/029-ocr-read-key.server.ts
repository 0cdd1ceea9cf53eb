import type { Kysely, Migration } from "kysely";

/**
 * Which picture the machine last read (`ocr_read_key`: the preview key it read), so that a files re-import reads the
 * images it has not: those stored before Koala read text, or read in another turn. Nothing is filled in: an image
 * whose text is the machine's and has no key was read before this column, in its current picture (a turn queues a
 * reading of its own), and the re-import's check counts it as read (models/image-ocr.server.ts). So the migration
 * only adds a column, at once on a table of millions, and writes no row.
 */
export function ocrReadKey(): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema.alterTable("images").addColumn("ocr_read_key", "text").execute();
    },
  };
}
