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
    return reply(request, await imageBody(image), { etag: imageTag(image.version) });
  },
  PATCH: async ({ request, params, actor }) => {
    const { scope, image } = await imageScope(actor, params.imageId);
    requireEdit(scope);
    const expected = ifMatch(request, image.version);
    const change = await readBody(request, ImageChange);
    const current = parseImage(image);
    try {
      await saveImageEdit(
        scope,
        image,
        {
          title: change.title ?? current.title,
          description: change.description ?? current.description,
          keywords: change.keywords ?? current.keywords,
          ocrText: change.ocrText ?? current.ocr_text,
        },
        0,
        expected ?? undefined,
      );
    } catch (err) {
      if (err instanceof StaleEdit && expected !== null) throw staleImage();
      throw err;
    }
    const { image: saved } = await imageScope(actor, image.id);
    return reply(request, await imageBody(saved), { etag: imageTag(saved.version) });
  },
  DELETE: async ({ request, params, actor }) => {
    const { scope, image } = await imageScope(actor, params.imageId);
    requireEdit(scope);
    ifMatch(request, image.version);
    await removeImage(scope, image);
    return noContent();
  },
};

export const loader = endpoint(methods);
export const action = endpoint(methods);
