import { StaleEdit } from "~/models/image-edits.server";
import { parseImage } from "~/models/images.server";
import { imageScope, requireEdit } from "~/models/scope.server";
import { saveImageEdit } from "~/services/ingest.server";
import { endpoint, readBody, reply, type Methods } from "./api.server";
import { ifMatch, imageBody, imageTag, staleImage } from "./representations.server";
import { Rotation } from "./schemas.server";

/**
 * POST /api/v1/images/{imageId}/rotate: turns the image clockwise as a new version (new thumbnail and preview, the
 * original kept), as the panel's Rotate and Save do. Takes `If-Match` like PATCH.
 */
const methods: Methods = {
  POST: async ({ request, params, actor }) => {
    const { scope, image } = await imageScope(actor, params.imageId);
    requireEdit(scope);
    const guarded = ifMatch(request, await imageBody(image));
    const { degrees } = await readBody(request, Rotation);
    const current = parseImage(image);
    const change = { title: current.title, description: current.description, keywords: current.keywords, ocrText: current.ocr_text };
    try {
      await saveImageEdit(scope, image, change, degrees, guarded ? image.version : undefined);
    } catch (err) {
      if (err instanceof StaleEdit && guarded) throw staleImage();
      throw err;
    }
    const saved = await imageBody((await imageScope(actor, image.id)).image);
    return reply(request, saved, { etag: imageTag(saved) });
  },
};

export const loader = endpoint(methods);
export const action = endpoint(methods);
