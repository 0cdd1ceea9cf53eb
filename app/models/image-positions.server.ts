import { db, type DB } from "~/db/connection.server";
import { NO_POSITION_VARIANT } from "~/lib/capture";
import { POSITIONS_JOB } from "~/lib/job-types";
import { lockProjectForImages } from "./images.server";
import { enqueueJob } from "./jobs.server";
import { assertObjectsStored, lockObjects } from "./objects.server";
import { write } from "./write.server";

/**
 * Positions taken out of originals already stored, when a project stops keeping them (services/position-removal.server.ts
 * does the files): the images whose original may still hold one, and the swap of an original for its copy without.
 */

export interface PositionsPayload {
  projectId: number;
  /** The images up to this id are done (the job goes on in pages, each a job of its own). */
  after: number;
}

/** Queued in the write that turns positions off (editProject), or by an operator (`koala remove-positions`). */
export async function queuePositionRemoval(projectId: number, executor: DB = db()) {
  await enqueueJob(POSITIONS_JOB, { projectId, after: 0 } satisfies PositionsPayload, { maxAttempts: 5 }, executor);
}

/**
 * Live images of the project after `after`, by id, whose original is not yet one stored without its position; none
 * while the project keeps positions.
 */
export function originalsToClear(projectId: number, after: number, limit: number) {
  return db()
    .selectFrom("images")
    .select(["id", "checksum", "storage_key"])
    .where("project_id", "=", projectId)
    .where(({ exists, selectFrom }) => exists(selectFrom("projects").select("id").where("id", "=", projectId).where("keep_gps", "=", 0)))
    .where("id", ">", after)
    .where("storage_key", "not like", `%-${NO_POSITION_VARIANT}.%`)
    .orderBy("id")
    .limit(limit)
    .execute();
}

/** The projects that keep no positions (`koala remove-positions` queues each). */
export async function projectsKeepingNoPositions(): Promise<number[]> {
  const rows = await db().selectFrom("projects").select("id").where("keep_gps", "=", 0).orderBy("id").execute();
  return rows.map((r) => r.id);
}

/**
 * The image's original becomes `key` (stored, and claimed under the image's checksum: the same picture less its
 * position), in the image and in every version that had the old one. "kept": the project keeps positions again, and
 * nothing changed; "gone": the image was deleted or its original changed since it was read.
 */
export async function replaceOriginal(
  projectId: number,
  image: { id: number; checksum: string; storage_key: string },
  key: string,
): Promise<"replaced" | "gone" | "kept"> {
  try {
    return await write(async (trx, touched) => {
      await lockObjects(trx, image.checksum);
      await assertObjectsStored(trx, [key]);
      // The image row before the project's, as every write that changes images takes them (a bulk edit, a rotation):
      // the other order could deadlock with them on PostgreSQL.
      const changed = await trx
        .updateTable("images")
        .set({ storage_key: key })
        .where("id", "=", image.id)
        .where("project_id", "=", projectId)
        .where("storage_key", "=", image.storage_key)
        .executeTakeFirst();
      if (!Number(changed.numUpdatedRows)) return "gone";
      if ((await lockProjectForImages(trx, projectId)).keepGps) throw new KeptAgain();
      await trx
        .updateTable("image_versions")
        .set({ storage_key: key })
        .where("image_id", "=", image.id)
        .where("storage_key", "=", image.storage_key)
        .execute();
      // Its pages show the original's key (a download link): the project's and its boards' versions move on.
      touched.project(projectId);
      await touched.boardsHolding([image.id]);
      return "replaced";
    });
  } catch (err) {
    if (err instanceof KeptAgain) return "kept";
    throw err;
  }
}

/** Rolls the swap back: the project keeps positions again. */
class KeptAgain extends Error {}
