import type { Kysely, Migration } from "kysely";

/**
 * Originals stored before Koala took positions out on upload (decision 0031) still hold the position their camera
 * wrote, in projects that keep none. Queues, once, the job that takes them out (`images.remove-positions`, the same
 * one turning the setting off queues) for each such project that has images: the upgrade cleans what is stored
 * without an operator's step. The job's row as the queue wrote it when this migration was made (jobs.server.ts).
 */
export function positionsOutOfOriginals(): Migration {
  return {
    async up(db: Kysely<any>) {
      const projects = await db
        .selectFrom("projects as p")
        .select("p.id")
        .where("p.keep_gps", "=", 0)
        .where(({ exists, selectFrom }) => exists(selectFrom("images as i").select("i.id").whereRef("i.project_id", "=", "p.id")))
        .execute();
      const now = Date.now();
      for (const { id } of projects as { id: number }[])
        await db
          .insertInto("jobs")
          .values({
            type: "images.remove-positions",
            payload: JSON.stringify({ projectId: id, after: 0 }),
            status: "queued",
            attempts: 0,
            max_attempts: 5,
            run_at: now,
            created_at: now,
            updated_at: now,
          })
          .execute();
    },
  };
}
