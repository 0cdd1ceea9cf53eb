import type { Kysely, Migration } from "kysely";
import { countries, languages, ORG_UNITS, timezones } from "../reference-data";

async function insertChunked(db: Kysely<any>, table: string, rows: Record<string, unknown>[]) {
  for (let i = 0; i < rows.length; i += 100)
    await db
      .insertInto(table)
      .values(rows.slice(i, i + 100))
      .execute();
}

export function referenceData(): Migration {
  return {
    async up(db) {
      const now = Date.now();
      await insertChunked(db, "countries", countries());
      await insertChunked(
        db,
        "languages",
        languages().map((l) => ({ ...l, created_at: now, updated_at: now })),
      );
      await insertChunked(db, "timezones", timezones());
      await insertChunked(
        db,
        "org_units",
        ORG_UNITS.map((name) => ({ name })),
      );
    },
    async down(db) {
      for (const t of ["countries", "languages", "timezones", "org_units"]) await db.deleteFrom(t).execute();
    },
  };
}
