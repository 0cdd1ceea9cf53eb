import type { Kysely, Migration } from "kysely";

/**
 * Which picture the machine last read (`ocr_read_key`: the preview key it read), so that a files re-import reads the
 * images it has not: those stored before Koala read text, or read in another turn. Images whose text is the machine's
 * were read in their current picture; the others are not known to have been, and a re-import reads them once.
 */
export function ocrReadKey(): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema.alterTable("images").addColumn("ocr_read_key", "text").execute();
      await db
        .updateTable("images")
        .set((eb) => ({ ocr_read_key: eb.ref("preview_key") }))
        .where("ocr_by_machine", "=", 1)
        .execute();
    },
  };
}
