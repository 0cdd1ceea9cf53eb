import type { Kysely, Migration } from "kysely";

/**
 * The near-duplicate lookup's quarter indexes (026) made covering: `(project_id, phN, phash, id)`, so a lookup reads
 * its candidates' DCT hashes from the index and the table only for the few within the bound. With `(project_id, phN)`
 * alone every candidate (about 15 per probed value in a 1M project, some 16,000 a lookup) was a random read of its
 * table row: P15's p99 was 641 ms on SQLite and 804 ms on PostgreSQL (bench/results/2026-11-29T09-52-58Z.md).
 */
export function coveringQuarters(): Migration {
  return {
    async up(db: Kysely<any>) {
      for (const band of [0, 1, 2, 3]) {
        await db.schema.dropIndex(`images_project_ph${band}`).execute();
        await db.schema
          .createIndex(`images_project_ph${band}`)
          .on("images")
          .columns(["project_id", `ph${band}`, "phash", "id"])
          .execute();
      }
    },
  };
}
