import { config } from "~/config.server";
import { getErrorMessage } from "~/lib/errors";
import { log } from "~/lib/log.server";
import { cleanFileName, titleFromFileName } from "~/lib/schemas";
import { PURGE_JOB } from "~/lib/job-types";
import { deleteImage, updateImage, type MetadataChange, type PurgePayload } from "~/models/image-edits.server";
import { insertImage, PositionsNotKept, type ImageLike, type ImageMetadata, type StoredImageFile } from "~/models/images.server";
import { forgetObjects, lockObjects, markUnreferenced, ObjectMissing, stalledPurges } from "~/models/objects.server";
import type { ProjectScope } from "~/models/scope.server";
import {
  createPendingUpload,
  deletePendingUploads,
  expiredPendingUploads,
  getPendingUpload,
  UPLOAD_URL_TTL_SECONDS,
} from "~/models/uploads.server";
import { write } from "~/models/write.server";
import { ImageRejected, storeDerivatives, storeImageFile, tooLarge } from "./image-files.server";
import { defineJob, queue, wakeRunners } from "./jobs.server";
import { ObjectTooLarge } from "./storage-contract";
import { newUploadKey, readObject, storage } from "./storage.server";

/**
 * The ways images come in and go out, over the models and the object store:
 * the three upload steps (sign, PUT, register), direct adds (CLI, demo), edits with rotation, and the
 * background removal of objects no row needs any more. Storage I/O always happens outside database
 * transactions; the `objects` table carries what the transactions need to know (objects.server.ts).
 */

/**
 * Step 1: a URL to PUT one file to, and the key to register it by. Given the file's size, an empty file or one
 * over the limit is refused before a byte is sent, and the URL accepts exactly that many bytes.
 */
export async function signUpload(scope: ProjectScope, fileName: string, size?: number) {
  if (size === 0) throw new ImageRejected("The file is empty.");
  if (size !== undefined && size > config().maxImageBytes) throw tooLarge();
  const key = newUploadKey();
  await createPendingUpload(scope, key, cleanFileName(fileName));
  const uploadUrl = await storage().signUpload(key, {
    maxBytes: config().maxImageBytes,
    exactBytes: size,
    expiresInSeconds: UPLOAD_URL_TTL_SECONDS,
  });
  return { uploadUrl, key };
}

/**
 * Step 3: checks the uploaded object (size, type, pixels, a clean decode), stores the original and derivatives
 * under content-addressed keys and inserts the image in one transaction with the claim of the upload.
 * The same key registered twice answers with the same image. A refused object is deleted at once.
 */
export async function registerUpload(scope: ProjectScope, key: string, meta: ImageMetadata): Promise<number> {
  const pending = await getPendingUpload(scope, key);
  if (pending.imageId) return pending.imageId;
  let read: Awaited<ReturnType<typeof readObject>>;
  try {
    read = await readObject(storage(), key, config().maxImageBytes);
  } catch (err) {
    if (!(err instanceof ObjectTooLarge)) throw err;
    await storage().delete(key);
    throw tooLarge();
  }
  if (!read) {
    // A concurrent registration of the same key may have just finished and removed the upload object.
    const again = await getPendingUpload(scope, key);
    if (again.imageId) return again.imageId;
    throw new ImageRejected("The file was not uploaded.");
  }
  let id: number;
  try {
    // Without a name or title given at registration, the name given when the upload was signed stands for both.
    const originalName = meta.originalName || pending.fileName;
    const title = meta.title || titleFromFileName(originalName);
    id = await addImageFile(scope, read.bytes, { ...meta, originalName, title }, { key, etag: read.etag });
  } catch (err) {
    if (err instanceof ImageRejected) await storage().delete(key);
    throw err;
  }
  // The bytes now live under their content key; a failure here is swept with the expired record.
  await storage()
    .delete(key)
    .catch((err: unknown) => log.warn("upload object not removed", { key, error: getErrorMessage(err) }));
  return id;
}

/**
 * Stores a file and inserts its image (CLI import, demo, registration). Should a purge take a shared object
 * between storing and committing, the objects are stored again (twice at most). `upload` is the object the bytes were read
 * from, claimed with the image; its version (`etag`) lets the store copy the original from it (storeImageFile).
 */
export async function addImageFile(
  scope: ProjectScope,
  buf: Buffer,
  meta: ImageMetadata,
  upload?: { key: string; etag?: string },
  at?: number,
): Promise<number> {
  let keepPositions = scope.project.keepGps;
  for (let attempt = 1; ; attempt++) {
    const file: StoredImageFile = await storeImageFile(buf, { source: upload, keepPositions });
    try {
      return await insertImage(scope, file, meta, { at, uploadKey: upload?.key });
    } catch (err) {
      if (err instanceof ObjectMissing && attempt <= 2) continue;
      // The manager turned positions off since the scope was read: the file goes in without its position. Only the
      // original kept with it is left over (the derivatives are the same pictures, under the same keys).
      if (err instanceof PositionsNotKept && keepPositions) {
        await purgeLater(file.checksum, [file.storageKey]);
        keepPositions = false;
        continue;
      }
      await purgeLater(file.checksum, [file.storageKey, file.thumbKey, file.previewKey]);
      throw err;
    }
  }
}

/**
 * Saves an edit as a new version. `rotateBy` (0, 90, 180 or 270) turns the image further: new derivatives are
 * made from the untouched original. Returns the new version, or null when nothing changed.
 */
export async function saveImageEdit(
  scope: ProjectScope,
  image: ImageLike,
  change: MetadataChange,
  rotateBy: number,
  expectedVersion?: number,
) {
  const rotation = (((image.rotation + rotateBy) % 360) + 360) % 360;
  if (rotation === image.rotation) return updateImage(scope, image, change, { expectedVersion });
  for (let attempt = 1; ; attempt++) {
    const original = (await readObject(storage(), image.storage_key, Number.MAX_SAFE_INTEGER))?.bytes;
    if (!original) throw new ObjectMissing(image.storage_key);
    const keys = await storeDerivatives(original, image.checksum, rotation);
    try {
      return await updateImage(scope, image, change, { expectedVersion, rotated: { rotation, ...keys } });
    } catch (err) {
      if (err instanceof ObjectMissing && attempt === 1) continue;
      await purgeLater(image.checksum, [keys.thumbKey, keys.previewKey]);
      throw err;
    }
  }
}

/** Objects stored for a write that then failed: the purge removes them unless some row uses them after all. */
export async function purgeLater(checksum: string, keys: string[], opts: { runAt?: number } = {}) {
  await queue(PURGE_JOB, { checksum, keys } satisfies PurgePayload, { maxAttempts: 20, ...opts }).catch((err: unknown) =>
    log.warn("purge not queued", { error: getErrorMessage(err) }),
  );
}

/** Deletes an image (at `expectedVersion` when given); its objects go in the background (see deleteImage). */
export async function removeImage(scope: ProjectScope, image: ImageLike, expectedVersion?: number) {
  await deleteImage(scope, image, expectedVersion);
  wakeRunners();
}

/**
 * Removes objects that no image or version refers to: marked under the object lock, their bytes deleted after
 * the commit (no storage I/O under the database's lock), then their rows forgotten.
 */
export async function purgeObjects(payload: PurgePayload) {
  const marked = await write(async (trx) => {
    await lockObjects(trx, payload.checksum);
    return markUnreferenced(trx, payload.checksum, payload.keys);
  });
  for (const key of marked) await storage().delete(key);
  await forgetObjects(marked);
}
/** The purge jobs (PURGE_JOB, PURGE_MANY_JOB): an image's objects, or many images' at once, once nothing refers to them. */
export const purgeJob = defineJob(purgeObjects);
export const purgeManyJob = defineJob(async ({ items }: { items: PurgePayload[] }) => {
  for (const item of items) await purgeObjects(item);
});

/** Housekeeping: purges that stopped half-way (a crash after marking) are finished. */
export async function resumeStalledPurges() {
  const keys = await stalledPurges();
  for (const key of keys) await storage().delete(key);
  await forgetObjects(keys);
  return keys.length;
}

/** Deletes the objects of expired pending uploads (never registered, or registered and already moved), then the records. */
export async function sweepExpiredUploads(now = Date.now()) {
  let swept = 0;
  for (;;) {
    const keys = await expiredPendingUploads(now);
    if (!keys.length) return swept;
    for (const key of keys) await storage().delete(key);
    await deletePendingUploads(keys);
    swept += keys.length;
  }
}
