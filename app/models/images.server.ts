import type { Insertable } from "kysely";
import { db, dialect } from "~/db/connection.server";
import type { Image, ImagesTable } from "~/db/schema";
import { recordedAs, type Actor } from "./actor";
import { queueOcr } from "./image-ocr.server";
import { assertObjectsStored, lockObjects } from "./objects.server";
import { requireEdit, visibleProjectIds, type MemberScope, type ProjectScope } from "./scope.server";
import { claimPendingUpload, getPendingUpload } from "./uploads.server";
import { write, type Trx } from "./write.server";
import { NotFoundError } from "~/lib/errors";
import { NO_CAPTURE, type CaptureData } from "~/lib/capture";
import { thumbOfGridKey } from "~/lib/media";
import type { Similarity } from "~/lib/similarity";
import { hashColumns, lookAlikes } from "./duplicates.server";

export interface StoredImageFile {
  storageKey: string;
  thumbKey: string;
  previewKey: string;
  mimeType: string;
  sizeBytes: number;
  width: number;
  height: number;
  checksum: string;
  /** What its EXIF said of how it was taken (services/capture.server.ts); absent: nothing was read (bulk loads). */
  capture?: CaptureData;
  /** Its perceptual hashes (services/similarity.server.ts); absent: none were made (bulk loads). */
  similarity?: Similarity;
  /** Its stored bytes hold the position its camera recorded (stored for a project that keeps positions). */
  keptPosition?: boolean;
}

export interface ImageMetadata {
  title: string;
  description: string;
  keywords: string[];
  ocrText: string;
  originalName: string;
}

export type ImageRecord = Omit<Image, "keywords"> & { keywords: string[] };

export type ImageLike = Image | ImageRecord;
/** The row with its keywords as a list (a row already parsed comes back as it is). */
export const parseImage = (row: ImageLike): ImageRecord =>
  typeof row.keywords === "string" ? { ...row, keywords: JSON.parse(row.keywords) as string[] } : (row as ImageRecord);

/** The images row of a newly stored file: version 1, unrotated. */
export function newImageRow(
  actor: Actor,
  projectId: number,
  file: StoredImageFile,
  meta: ImageMetadata,
  at: number,
  keepGps = false,
  dupOf: number | null = null,
): Insertable<ImagesTable> {
  const capture = file.capture ?? NO_CAPTURE;
  const gps = keepGps ? capture.gps : null;
  return {
    project_id: projectId,
    title: meta.title,
    description: meta.description,
    keywords: JSON.stringify(meta.keywords),
    ocr_text: meta.ocrText,
    original_name: meta.originalName,
    mime_type: file.mimeType,
    storage_key: file.storageKey,
    thumb_key: file.thumbKey,
    preview_key: file.previewKey,
    size_bytes: file.sizeBytes,
    width: file.width,
    height: file.height,
    checksum: file.checksum,
    taken_at: capture.takenAt,
    camera_make: capture.cameraMake,
    camera_model: capture.cameraModel,
    gps_lat: gps?.lat ?? null,
    gps_lon: gps?.lon ?? null,
    ...hashColumns(file.similarity),
    dup_of: dupOf,
    rotation: 0,
    version: 1,
    created_by: recordedAs(actor),
    created_at: at,
    updated_at: at,
  };
}

export interface InsertOptions {
  at?: number;
  /** The pending upload this image registers: claimed in the same transaction; a second claim returns the first image. */
  uploadKey?: string;
}

class AlreadyRegistered extends Error {}

/** A file stored with its position meets a project that (since) keeps none: it is stored again without (addImageFile). */
export class PositionsNotKept extends Error {}

/**
 * Inside a write: the image is a live one of the project, or 404 (it may have been deleted since the caller's scope
 * was resolved).
 */
export async function requireLiveImage(trx: Trx, projectId: number, imageId: number) {
  const image = await trx
    .selectFrom("images")
    .select("id")
    .where("id", "=", imageId)
    .where("project_id", "=", projectId)
    .executeTakeFirst();
  if (!image) throw new NotFoundError("Image not found");
}

/**
 * Inside a write that adds (or re-reads) an image: the project's row, locked on PostgreSQL (SQLite's write lock is
 * the whole database), and whether it keeps GPS positions. So a manager turning positions off (which clears them,
 * editProject) waits for this write or this write for it, and no position is written after the clear; and two uploads
 * to one project look for look-alikes one after the other, each seeing the other's image (under READ COMMITTED two
 * near-copies uploaded at once would otherwise each miss the other).
 */
export async function lockProjectForImages(trx: Trx, projectId: number) {
  const q = trx.selectFrom("projects").select("keep_gps").where("id", "=", projectId);
  // FOR NO KEY UPDATE, not FOR SHARE: the write's commit updates this row (its version), and two uploads each holding
  // a share lock would then wait for each other (a deadlock). Uploads to one project already queue on that update.
  const row = await (dialect() === "postgres" ? q.forNoKeyUpdate() : q).executeTakeFirst();
  return { keepGps: row?.keep_gps === 1 };
}

/** The scope's live images among `ids`, in the order of `ids` (missing ones left out). */
export async function imagesByIds(scope: MemberScope, ids: number[]): Promise<ImageRecord[]> {
  const wanted = ids.filter(Number.isSafeInteger);
  if (!wanted.length) return [];
  const rows = await db().selectFrom("images").selectAll().where("id", "in", wanted).where("project_id", "=", scope.project.id).execute();
  const byId = new Map(rows.map((r) => [r.id, parseImage(r)]));
  return wanted.flatMap((id) => byId.get(id) ?? []);
}

/**
 * Inserts an image and its first version in one transaction. Under the object lock the file's objects must be
 * recorded as stored (a row lookup, no storage I/O), so no row is ever committed whose objects are gone.
 * With `uploadKey`, registering it twice gives one image.
 */
export async function insertImage(
  scope: ProjectScope,
  file: StoredImageFile,
  meta: ImageMetadata,
  opts: InsertOptions = {},
): Promise<number> {
  requireEdit(scope);
  const { actor, project } = scope;
  const at = opts.at ?? Date.now();
  try {
    return await write(async (trx, touched) => {
      await lockObjects(trx, file.checksum);
      await assertObjectsStored(trx, [file.storageKey, file.thumbKey, file.previewKey]);
      const { keepGps } = await lockProjectForImages(trx, project.id);
      if (file.keptPosition && !keepGps) throw new PositionsNotKept();
      // The closest look-alike already in the project, read in the write that inserts (under the project's lock).
      const [like] = file.similarity ? await lookAlikes(trx, project.id, file.similarity, { limit: 1 }) : [];
      const row = await trx
        .insertInto("images")
        .values(newImageRow(actor, project.id, file, meta, at, keepGps, like?.group ?? null))
        .returning("id")
        .executeTakeFirstOrThrow();
      await trx
        .insertInto("image_versions")
        .values({
          image_id: row.id,
          version: 1,
          title: meta.title,
          description: meta.description,
          keywords: JSON.stringify(meta.keywords),
          ocr_text: meta.ocrText,
          rotation: 0,
          storage_key: file.storageKey,
          thumb_key: file.thumbKey,
          preview_key: file.previewKey,
          changes: JSON.stringify(["created"]),
          changed_by: recordedAs(actor),
          changed_at: at,
        })
        .execute();
      if (opts.uploadKey && !(await claimPendingUpload(trx, opts.uploadKey, row.id))) throw new AlreadyRegistered();
      if (!meta.ocrText) await queueOcr(trx, row.id);
      touched.project(project.id);
      return row.id;
    }, at);
  } catch (err) {
    if (!(err instanceof AlreadyRegistered) || !opts.uploadKey) throw err;
    const pending = await getPendingUpload(scope, opts.uploadKey);
    return pending.imageId!;
  }
}

/**
 * Whether an actor may fetch an object of an image, and as what: any key of the image or of one of its versions
 * (an old version's derivative stays reachable for the version slider). The media route's one question, in one
 * query for the current keys.
 */
export async function findImageObject(actor: Actor, imageId: number, key: string): Promise<{ mimeType: string; fileName: string } | null> {
  if (!Number.isSafeInteger(imageId)) return null;
  let q = db()
    .selectFrom("images as i")
    .select(["i.id", "i.mime_type", "i.storage_key", "i.thumb_key", "i.preview_key", "i.original_name"])
    .where("i.id", "=", imageId);
  if (actor.role !== "admin")
    q = q.where((eb) =>
      eb.exists(
        eb
          .selectFrom("project_members as m")
          .select("m.user_id")
          .whereRef("m.project_id", "=", "i.project_id")
          .where("m.user_id", "=", actor.id),
      ),
    );
  // The media path reads sessions only; should a token's actor ever come here, its grant narrows it too.
  if (actor.grant) q = q.where("i.project_id", "in", visibleProjectIds(actor));
  const image = await q.executeTakeFirst();
  return image ? objectOf(image, key) : null;
}

/** The object `key` of an image (current or an older version's), or null when the image has no such key. */
export async function objectOf(
  image: { id: number; mime_type: string; storage_key: string; thumb_key: string; preview_key: string; original_name: string },
  key: string,
): Promise<{ mimeType: string; fileName: string } | null> {
  const fileName = image.original_name;
  // A grid thumbnail belongs to the image whose thumbnail it is made from.
  const thumb = thumbOfGridKey(key) ?? key;
  if ([image.storage_key, image.thumb_key, image.preview_key].includes(thumb))
    return { mimeType: thumb === image.storage_key ? image.mime_type : "image/webp", fileName };
  const version = await db()
    .selectFrom("image_versions")
    .select(["storage_key", "thumb_key", "preview_key"])
    .where("image_id", "=", image.id)
    .where((eb) => eb.or([eb("storage_key", "=", thumb), eb("thumb_key", "=", thumb), eb("preview_key", "=", thumb)]))
    .executeTakeFirst();
  if (!version) return null;
  return { mimeType: thumb === version.storage_key ? image.mime_type : "image/webp", fileName };
}

/**
 * Bulk insert of metadata-only images that reuse stored files (seeds for performance work).
 * Rows go in chunks of 100 inside one transaction per call; no versions are written.
 */
export async function insertImageRows(scope: ProjectScope, rows: { file: StoredImageFile; meta: ImageMetadata; at: number }[]) {
  requireEdit(scope);
  const values = rows.map(({ file, meta, at }) => newImageRow(scope.actor, scope.project.id, file, meta, at));
  await write(async (trx, touched) => {
    // Chunks of 100 rows stay under SQLite's bound-parameter limit on every build.
    for (let i = 0; i < values.length; i += 100)
      await trx
        .insertInto("images")
        .values(values.slice(i, i + 100))
        .execute();
    touched.project(scope.project.id);
  });
}

export interface ImageDetail {
  image: ImageRecord;
  project: { id: number; name: string };
  /** Every attribute value of the image, with the attribute's name and type (3 = user attribute). */
  attributes: { attributeId: number; name: string; type: number; value: string }[];
  /** True when the project has user attributes (type 3) at all. */
  projectHasUserAttributes: boolean;
  /** Newest first. */
  versions: {
    version: number;
    title: string;
    description: string;
    keywords: string[];
    ocrText: string;
    thumbKey: string;
    previewKey: string;
    changes: string[];
    changedAt: number;
    changedBy: string | null;
  }[];
}

/** An image's values of active attributes, with the attributes' names and types (3 = user attribute). */
export async function imageAttributes(imageId: number) {
  return db()
    .selectFrom("image_attribute_values as v")
    .innerJoin("attributes as a", "a.id", "v.attribute_id")
    .select(["a.id as attributeId", "a.name", "a.type", "v.value"])
    .where("v.image_id", "=", imageId)
    .where("a.active", "=", 1)
    .orderBy("a.name")
    .execute();
}

/** The single image panel's data: the image, its attribute values and its real version history. */
export async function getImageDetail(scope: ProjectScope, row: ImageLike): Promise<ImageDetail> {
  const image = parseImage(row);
  const project = { id: scope.project.id, name: scope.project.name };
  const [attributes, userAttributes, versions] = await Promise.all([
    imageAttributes(image.id),
    db().selectFrom("attributes").select("id").where("project_id", "=", image.project_id).where("type", "=", 3).limit(1).execute(),
    db()
      .selectFrom("image_versions as iv")
      .leftJoin("users as u", "u.id", "iv.changed_by")
      .select([
        "iv.version",
        "iv.title",
        "iv.description",
        "iv.keywords",
        "iv.ocr_text",
        "iv.thumb_key",
        "iv.preview_key",
        "iv.changes",
        "iv.changed_at",
        "u.name",
        "u.surname",
      ])
      .where("iv.image_id", "=", image.id)
      .orderBy("iv.version", "desc")
      .limit(50)
      .execute(),
  ]);
  return {
    image,
    project,
    attributes,
    projectHasUserAttributes: userAttributes.length > 0,
    versions: versions.map((v) => ({
      version: v.version,
      title: v.title,
      description: v.description,
      keywords: JSON.parse(v.keywords) as string[],
      ocrText: v.ocr_text,
      thumbKey: v.thumb_key,
      previewKey: v.preview_key,
      changes: JSON.parse(v.changes) as string[],
      changedAt: v.changed_at,
      changedBy: v.name ? `${v.name} ${v.surname ?? ""}`.trim() : null,
    })),
  };
}
