import { db } from "~/db/connection.server";
import type { Insertable } from "kysely";
import type { Image, ImagesTable } from "~/db/schema";
import { visibleProjectIds } from "./access.server";
import { NotFoundError, recordedAs, type Actor } from "./actor";
import { lockObjects } from "./objects.server";
import { assertCanEdit, touchProject } from "./projects.server";
import { claimPendingUpload, getPendingUpload } from "./uploads.server";

export interface StoredImageFile {
  storageKey: string;
  thumbKey: string;
  previewKey: string;
  mimeType: string;
  sizeBytes: number;
  width: number;
  height: number;
  checksum: string;
}

export interface ImageMetadata {
  title: string;
  description: string;
  keywords: string[];
  ocrText: string;
  originalName: string;
}

export type ImageRecord = Omit<Image, "keywords"> & { keywords: string[] };

const parse = (row: Image): ImageRecord => ({ ...row, keywords: JSON.parse(row.keywords) as string[] });

/** The images row of a newly stored file: version 1, unrotated. */
function newImageRow(actor: Actor, projectId: number, file: StoredImageFile, meta: ImageMetadata, at: number): Insertable<ImagesTable> {
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
    rotation: 0,
    version: 1,
    created_by: recordedAs(actor),
    created_at: at,
    updated_at: at,
    deleted_at: null,
  };
}

/** An image the actor may see, or NotFoundError. */
export async function getImage(actor: Actor, imageId: number): Promise<ImageRecord> {
  const row = Number.isSafeInteger(imageId)
    ? await db()
        .selectFrom("images")
        .selectAll()
        .where("id", "=", imageId)
        .where("deleted_at", "is", null)
        .where("project_id", "in", visibleProjectIds(actor))
        .executeTakeFirst()
    : undefined;
  if (!row) throw new NotFoundError("Image not found");
  return parse(row);
}

export interface InsertOptions {
  at?: number;
  /**
   * Runs inside the transaction, under the object lock: throws when the image's objects are not all stored,
   * so no row is ever committed whose objects are gone.
   */
  verifyObjects?: () => Promise<void>;
  /** The pending upload this image registers: claimed in the same transaction; a second claim returns the first image. */
  uploadKey?: string;
}

class AlreadyRegistered extends Error {}

/** The actor's visible images of one project among `ids`, in the order of `ids` (missing ones left out). */
export async function imagesByIds(actor: Actor, projectId: number, ids: number[]): Promise<ImageRecord[]> {
  const wanted = ids.filter(Number.isSafeInteger);
  if (!wanted.length) return [];
  const rows = await db()
    .selectFrom("images")
    .selectAll()
    .where("id", "in", wanted)
    .where("project_id", "=", projectId)
    .where("deleted_at", "is", null)
    .where("project_id", "in", visibleProjectIds(actor))
    .execute();
  const byId = new Map(rows.map((r) => [r.id, parse(r)]));
  return wanted.flatMap((id) => byId.get(id) ?? []);
}

/** Inserts an image and its first version in one transaction; with `uploadKey`, registering it twice gives one image. */
export async function insertImage(actor: Actor, projectId: number, file: StoredImageFile, meta: ImageMetadata, opts: InsertOptions = {}): Promise<number> {
  await assertCanEdit(actor, projectId);
  const at = opts.at ?? Date.now();
  let id: number;
  try {
    id = await db()
      .transaction()
      .execute(async (trx) => {
        await lockObjects(trx, file.checksum);
        await opts.verifyObjects?.();
        const row = await trx.insertInto("images").values(newImageRow(actor, projectId, file, meta, at)).returning("id").executeTakeFirstOrThrow();
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
        return row.id;
      });
  } catch (err) {
    if (!(err instanceof AlreadyRegistered) || !opts.uploadKey) throw err;
    const pending = await getPendingUpload(actor, projectId, opts.uploadKey);
    return pending.imageId!;
  }
  await touchProject(projectId, at);
  return id;
}

/**
 * The storage keys an actor may fetch for an image: any key of the image or of one of its versions.
 * Used by the media route, so an old version's derivative stays reachable for the version slider.
 */
export async function findImageObject(actor: Actor, imageId: number, key: string): Promise<{ mimeType: string; fileName: string } | null> {
  if (!Number.isSafeInteger(imageId)) return null;
  const image = await db()
    .selectFrom("images")
    .select(["id", "mime_type", "storage_key", "thumb_key", "preview_key", "original_name"])
    .where("id", "=", imageId)
    .where("deleted_at", "is", null)
    .where("project_id", "in", visibleProjectIds(actor))
    .executeTakeFirst();
  if (!image) return null;
  const fileName = image.original_name;
  if ([image.storage_key, image.thumb_key, image.preview_key].includes(key))
    return { mimeType: key === image.storage_key ? image.mime_type : "image/webp", fileName };
  const version = await db()
    .selectFrom("image_versions")
    .select(["storage_key", "thumb_key", "preview_key"])
    .where("image_id", "=", imageId)
    .where((eb) => eb.or([eb("storage_key", "=", key), eb("thumb_key", "=", key), eb("preview_key", "=", key)]))
    .executeTakeFirst();
  if (!version) return null;
  return { mimeType: key === version.storage_key ? image.mime_type : "image/webp", fileName };
}

/**
 * Bulk insert of metadata-only images that reuse stored files (seeds for performance work).
 * Rows go in chunks of 100 inside one transaction per call; no versions are written.
 */
export async function insertImageRows(
  actor: Actor,
  projectId: number,
  rows: { file: StoredImageFile; meta: ImageMetadata; at: number }[],
) {
  await assertCanEdit(actor, projectId);
  const values = rows.map(({ file, meta, at }) => newImageRow(actor, projectId, file, meta, at));
  await db()
    .transaction()
    .execute(async (trx) => {
      // Chunks of 100 rows stay under SQLite's bound-parameter limit on every build.
      for (let i = 0; i < values.length; i += 100) await trx.insertInto("images").values(values.slice(i, i + 100)).execute();
    });
  await touchProject(projectId);
}

export interface ImageDetail {
  image: ImageRecord;
  project: { id: number; name: string };
  /** Every attribute value of the image, with the attribute's name and type (3 = user attribute). */
  attributes: { attributeId: number; name: string; type: number; value: string }[];
  /** True when the project has user attributes (type 3) at all. */
  projectHasUserAttributes: boolean;
  /** Newest first. */
  versions: { version: number; title: string; description: string; keywords: string[]; ocrText: string; thumbKey: string; previewKey: string; changes: string[]; changedAt: number; changedBy: string | null }[];
}

/** The single image panel's data: the image, its attribute values and its real version history. */
export async function getImageDetail(actor: Actor, imageId: number): Promise<ImageDetail> {
  const image = await getImage(actor, imageId);
  const [project, attributes, userAttributes, versions] = await Promise.all([
    db().selectFrom("projects").select(["id", "name"]).where("id", "=", image.project_id).executeTakeFirstOrThrow(),
    db()
      .selectFrom("image_attribute_values as v")
      .innerJoin("attributes as a", "a.id", "v.attribute_id")
      .select(["a.id as attributeId", "a.name", "a.type", "v.value"])
      .where("v.image_id", "=", image.id)
      .where("a.active", "=", 1)
      .orderBy("a.name")
      .execute(),
    db().selectFrom("attributes").select("id").where("project_id", "=", image.project_id).where("type", "=", 3).limit(1).execute(),
    db()
      .selectFrom("image_versions as iv")
      .leftJoin("users as u", "u.id", "iv.changed_by")
      .select(["iv.version", "iv.title", "iv.description", "iv.keywords", "iv.ocr_text", "iv.thumb_key", "iv.preview_key", "iv.changes", "iv.changed_at", "u.name", "u.surname"])
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
