import { imageAttributes, parseImage } from "~/models/images.server";
import { imageScope } from "~/models/scope.server";
import { type Methods, endpoint, reply } from "./api.server";

const iso = (ms: number) => new Date(Number(ms)).toISOString();

/** GET /api/v1/images/{imageId}: the image's details and attribute values; its ETag is its version. */
const methods: Methods = {
  GET: async ({ request, params, actor }) => {
    const { image: row } = await imageScope(actor, params.imageId);
    const image = parseImage(row);
    const attributes = await imageAttributes(image.id);
    const body = {
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
    return reply(request, body, { etag: `"v${image.version}"` });
  },
};

export const loader = endpoint(methods);
export const action = endpoint(methods);
