import type { Kysely, Migration } from "kysely";

/**
 * A long job's checkpoint: where its next attempt resumes (JSON, the job's own shape; an import's rows written), kept
 * with the job so that a worker killed mid-way leaves it to another worker that skips what was committed.
 */
export function jobCheckpoints(): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema.alterTable("jobs").addColumn("checkpoint", "text").execute();
    },
  };
}
