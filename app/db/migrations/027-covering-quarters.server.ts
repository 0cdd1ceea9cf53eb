import type { Kysely, Migration } from "kysely";

/**
 * The near-duplicate lookup's quarter indexes (026) made covering: `images_project_phN_hash` on
 * `(project_id, phN, phash, id)`, so a lookup sifts its candidates by the DCT hash the index holds and reads the table
 * only for the few within the bound. With `(project_id, phN)` alone each of a lookup's ~4,000 candidates in a 1M
 * project was a random read of its table row: P15's p99 was 641 ms on SQLite and 804 ms on PostgreSQL
 * (bench/results/2026-11-29T09-52-58Z.md). The new indexes are built before the old ones are dropped: on PostgreSQL
 * writes wait while they build, and reads only for the drop at the end (DROP INDEX locks the table); and a start
 * that stopped half-way runs it again from where it was (SQLite's DDL is not in a transaction).
 */
export function coveringQuarters(): Migration {
  return {
    async up(db: Kysely<any>) {
      for (const band of [0, 1, 2, 3])
        await db.schema
          .createIndex(`images_project_ph${band}_hash`)
          .ifNotExists()
          .on("images")
          .columns(["project_id", `ph${band}`, "phash", "id"])
          .execute();
      for (const band of [0, 1, 2, 3]) await db.schema.dropIndex(`images_project_ph${band}`).ifExists().execute();
    },
  };
}
