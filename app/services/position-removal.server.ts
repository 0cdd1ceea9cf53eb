import { POSITIONS_JOB } from "~/lib/job-types";
import { log } from "~/lib/log.server";
import { originalsToClear, replaceOriginal, type PositionsPayload } from "~/models/image-positions.server";
import { claimObjects } from "~/models/objects.server";
import { readCapture } from "./capture.server";
import { ImageRejected, keyWithoutPosition } from "./image-files.server";
import { purgeLater } from "./ingest.server";
import { defineJob, queue } from "./jobs.server";
import { withoutPosition } from "./positions.server";
import { readObject, storage } from "./storage.server";

/** Images read per run of the job; the next page is a job of its own (a short lease, and progress kept between them). */
export const positionRemoval = { page: 100 };

/**
 * The job (POSITIONS_JOB) that takes the camera's position out of a project's stored originals, once the project
 * keeps none: each original not yet stored without one is read, and where it holds a position the copy without is
 * stored under its own key (`-nogps`) and swapped in, in the image and its versions; the old object goes when nothing
 * else refers to it (another project's image of the same file that keeps its position does). A project that keeps
 * positions again stops the job.
 */
export async function removePositions({ projectId, after }: PositionsPayload) {
  const page = await originalsToClear(projectId, after, positionRemoval.page);
  let removed = 0;
  for (const image of page) {
    try {
      const outcome = await removePosition(projectId, image);
      if (outcome === "kept") return { removed, stopped: "The project keeps positions again." };
      if (outcome === "replaced") removed += 1;
    } catch (err) {
      // One image's trouble (its file unreadable) is logged and passed; the database or the store gone fails the page.
      if (!(err instanceof ImageRejected)) throw err;
      log.warn("position not removed", { imageId: image.id, error: err.message });
    }
  }
  if (page.length === positionRemoval.page) await queue(POSITIONS_JOB, { projectId, after: page.at(-1)!.id } satisfies PositionsPayload);
  return { removed };
}

/** The time an original swapped out stays, for a download or an edit that read its key before the swap. */
const SWAPPED_ORIGINAL_GRACE_MS = 10 * 60_000;

async function removePosition(projectId: number, image: { id: number; checksum: string; storage_key: string }) {
  const original = (await readObject(storage(), image.storage_key, Number.MAX_SAFE_INTEGER))?.bytes;
  // Gone: the image was deleted since the page was read, and its objects with it.
  if (!original) return "gone";
  const bytes = withoutPosition(original);
  if ((await readCapture(bytes)).gps) throw new ImageRejected("its position is in a form Koala cannot take out");
  if (bytes === original) return "unchanged";
  const key = keyWithoutPosition(image.checksum, image.storage_key);
  await claimObjects(image.checksum, [key]);
  if ((await storage().size(key)) !== bytes.length) await storage().put(key, bytes);
  const outcome = await replaceOriginal(projectId, image, key);
  if (outcome === "replaced") await purgeLater(image.checksum, [image.storage_key], { runAt: Date.now() + SWAPPED_ORIGINAL_GRACE_MS });
  else await purgeLater(image.checksum, [key]);
  return outcome;
}

export const positionsJob = defineJob(removePositions);
