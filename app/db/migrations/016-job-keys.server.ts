import type { Kysely, Migration } from "kysely";

/**
 * A job may carry a key that no other job ever shares (a daily digest's is its type and its day): two instances
 * that queue the same daily run in the same second make one row, not two.
 */
export function jobKeys(): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema.alterTable("jobs").addColumn("unique_key", "text").execute();
      await db.schema.createIndex("jobs_unique_key").on("jobs").column("unique_key").unique().execute();
    },
  };
}
