import type { Kysely, Migration } from "kysely";

/**
 * Whose the OCR text is: 1 when Koala read it from the picture (the OCR job), 0 when a person wrote it or there is
 * none. The job fills only an empty field or its own text; a person's is never overwritten.
 */
export function machineOcr(): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .alterTable("images")
        .addColumn("ocr_by_machine", "integer", (c) => c.notNull().defaultTo(0))
        .execute();
    },
  };
}
