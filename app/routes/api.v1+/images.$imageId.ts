import { StaleEdit } from "~/models/image-edits.server";
import { parseImage } from "~/models/images.server";
import { imageScope, requireEdit } from "~/models/scope.server";
import { removeImage, saveImageEdit } from "~/services/ingest.server";
import { endpoint, noContent, readBody, reply, type Methods } from "./api.server";
import { ifMatch, imageBody, imageTag, staleImage } from "./representations.server";
import { ImageChange } from "./schemas.server";

/**
 * /api/v1/images/{imageId}: the image (GET, its ETag its version); its metadata changed as a new version (PATCH);
 * deleted, its files removed in the background (DELETE). Both writes take `If-Match`: a version that is no longer
 * the image's is 412, nothing changed.
 */
const methods: Methods = {
  GET: async ({ request, params, actor }) => {
    const { image } = await imageScope(actor, params.imageId);
    const body = await imageBody(image);
    return reply(request, body, { etag: imageTag(body) });
  },
  PATCH: async ({ request, params, actor }) => {
    const { scope, image } = await imageScope(actor, params.imageId);
    requireEdit(scope);
    const guarded = ifMatch(request, await imageBody(image));
    const change = await readBody(request, ImageChange);
    const current = parseImage(image);
    const next = {
      title: change.title ?? current.title,
      description: change.description ?? current.description,
      keywords: change.keywords ?? current.keywords,
      ocrText: change.ocrText ?? current.ocr_text,
    };
    try {
      await saveImageEdit(scope, image, next, 0, guarded ? image.version : undefined);
    } catch (err) {
      if (err instanceof StaleEdit && guarded) throw staleImage();
      throw err;
    }
    const saved = await imageBody((await imageScope(actor, image.id)).image);
    return reply(request, saved, { etag: imageTag(saved) });
  },
  DELETE: async ({ request, params, actor }) => {
    const { scope, image } = await imageScope(actor, params.imageId);
    requireEdit(scope);
    const guarded = ifMatch(request, await imageBody(image));
    try {
      await removeImage(scope, image, guarded ? image.version : undefined);
    } catch (err) {
      if (err instanceof StaleEdit) throw staleImage();
      throw err;
    }
    return noContent();
  },
};

export const loader = endpoint(methods);
export const action = endpoint(methods);
