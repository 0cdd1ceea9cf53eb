import type { ImageLike } from "~/models/images.server";
import { imageAttributes, parseImage } from "~/models/images.server";
import type { ManagedLink } from "~/models/share-links.server";
import { ApiProblem } from "./api.server";

/** How the API shows the product's records: its field names, times as ISO 8601. */
const iso = (ms: number | string | bigint) => new Date(Number(ms)).toISOString();
const isoOrNull = (ms: number | null) => (ms === null ? null : iso(ms));

/** An image with its attribute values (one more query); its ETag is `imageTag`. */
export async function imageBody(row: ImageLike) {
  const image = parseImage(row);
  const attributes = await imageAttributes(image.id);
  return {
    id: image.id,
    projectId: image.project_id,
    title: image.title,
    description: image.description,
    keywords: image.keywords,
    ocrText: image.ocr_text,
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

export const imageTag = (version: number) => `"v${version}"`;

/**
 * The version an `If-Match` names: null without one; `*` matches any. A tag that is not one of ours can match
 * nothing, so it is 412 at once.
 */
export function ifMatch(request: Request, current: number): number | null {
  const header = request.headers.get("If-Match");
  if (header === null) return null;
  if (header.trim() === "*") return current;
  const tags = header.split(",").map((t) => t.trim().replace(/^W\//, ""));
  if (tags.includes(imageTag(current))) return current;
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
