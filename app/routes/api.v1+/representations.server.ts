import { takenIso } from "~/lib/capture";
import { sha256 } from "~/lib/crypto.server";
import type { ImageLike } from "~/models/images.server";
import { lookAlikeOf } from "~/models/duplicates.server";
import { imageAttributes, parseImage } from "~/models/images.server";
import type { JobStatus } from "~/models/jobs.server";
import type { ManagedLink } from "~/models/share-links.server";
import { ApiProblem } from "./api.server";

/** How the API shows the product's records: its field names, times as ISO 8601. */
const iso = (ms: number | string | bigint) => new Date(Number(ms)).toISOString();
const isoOrNull = (ms: number | null) => (ms === null ? null : iso(ms));

/** An image with its attribute values and its look-alike (two more queries); its ETag is `imageTag` of it. */
export async function imageBody(row: ImageLike) {
  const image = parseImage(row);
  const [attributes, like] = await Promise.all([imageAttributes(image.id), lookAlikeOf(image)]);
  return {
    id: image.id,
    projectId: image.project_id,
    title: image.title,
    description: image.description,
    keywords: image.keywords,
    ocrText: image.ocr_text,
    ocrByMachine: image.ocr_by_machine === 1,
    takenAt: takenIso(Number(image.taken_at)),
    camera: { make: image.camera_make, model: image.camera_model },
    location: image.gps_lat !== null && image.gps_lon !== null ? { latitude: image.gps_lat, longitude: image.gps_lon } : null,
    possibleDuplicateOf: like?.id ?? null,
    originalName: image.original_name,
    mimeType: image.mime_type,
    sizeBytes: Number(image.size_bytes),
    width: image.width,
    height: image.height,
    rotation: image.rotation,
    version: image.version,
    createdAt: iso(image.created_at),
    updatedAt: iso(image.updated_at),
    attributes: attributes.map((a) => ({ attributeId: a.attributeId, name: a.name, value: a.value })),
  };
}

/**
 * An image's ETag: its version, and what changes without a new version (its attribute values; its location, which
 * a manager's privacy setting clears; its look-alike, which Keep both clears), so that a cached copy is never taken
 * for the current one.
 */
export const imageTag = (image: { version: number; attributes: unknown[]; location?: unknown; possibleDuplicateOf?: number | null }) =>
  `"v${image.version}-${sha256(JSON.stringify([image.attributes, image.location ?? null, image.possibleDuplicateOf ?? null])).slice(0, 12)}"`;

/**
 * Whether the request holds an `If-Match` (true), which then names the image as it is now (`*`, or its current
 * tag, compared strongly: a weak tag matches nothing); one that does not is 412, nothing changed.
 */
export function ifMatch(request: Request, image: { version: number; attributes: unknown[] }): boolean {
  const header = request.headers.get("If-Match");
  if (header === null) return false;
  if (header.trim() === "*") return true;
  if (header.split(",").some((t) => t.trim() === imageTag(image))) return true;
  throw staleImage();
}

export const staleImage = () => new ApiProblem(412, "The image was changed by someone else. Reload it to see the latest version.", {}, {});

export const shareLinkBody = (l: ManagedLink) => ({
  id: l.id,
  label: l.label,
  recipient: l.recipient,
  createdAt: iso(l.createdAt),
  expiresAt: isoOrNull(l.expiresAt),
  revokedAt: isoOrNull(l.revokedAt),
  lastOpenedAt: isoOrNull(l.lastOpenedAt),
  views: l.views,
  downloads: l.downloads,
  allowDownload: l.allowDownload,
  showMetadata: l.showMetadata,
});

/** A job as the API shows it: its result only what it did (`affected`, `skipped`), once done. */
export function jobBody(job: JobStatus) {
  const result = job.result as { affected?: number; skipped?: number } | null;
  return {
    id: job.id,
    status: job.status,
    progress: job.progress,
    total: job.total,
    result: job.status === "done" && result ? { affected: result.affected ?? 0, skipped: result.skipped ?? 0 } : null,
  };
}
