import { createReadableStreamFromReadable } from "@remix-run/node";
import { asDownload } from "~/lib/download-slots.server";
import { NotFoundError } from "~/lib/errors";
import { attachment } from "~/lib/file-names";
import { imageScope } from "~/models/scope.server";
import { storage } from "~/services/storage.server";
import { objectHeaders, offloaded } from "~/web/media.server";
import { endpoint, readQuery, type Methods } from "./api.server";
import { FileQuery } from "./schemas.server";

/**
 * GET /api/v1/images/{imageId}/file: the image's bytes, its current version. The original is a download, named as
 * uploaded, and takes one of its owner's download places while it streams (as on the pages: 429 past them); the
 * WebP preview and thumbnail are handed to nginx or S3 where MEDIA_OFFLOAD says so (a redirect to a signed URL,
 * which clients follow without the token). The ETag is the content's key: `If-None-Match` answers 304.
 */
const methods: Methods = {
  GET: async ({ request, params, url, actor }) => {
    const { variant } = readQuery(url, FileQuery);
    const { image } = await imageScope(actor, params.imageId);
    const original = variant === "original";
    const key = original ? image.storage_key : variant === "preview" ? image.preview_key : image.thumb_key;
    const headers = objectHeaders(key, original ? image.mime_type : "image/webp", "private, no-cache");
    if (request.headers.get("If-None-Match") === headers.ETag) return new Response(null, { status: 304, headers });
    if (original) headers["Content-Disposition"] = attachment(image.original_name || `image-${image.id}`);
    else {
      const handedOff = await offloaded(key, { mimeType: headers["Content-Type"]! }, headers, true);
      if (handedOff) return new Response(null, { status: handedOff.status, headers: handedOff.headers });
    }
    if (request.method === "HEAD") {
      // The size without opening the file: Remix sends no body for HEAD, and would leave an opened one open.
      const size = await storage().size(key);
      if (size === null) throw new NotFoundError();
      return new Response(null, { headers: { ...headers, "Content-Length": String(size) } });
    }
    const send = async () => {
      const found = await storage().get(key);
      if (!found) throw new NotFoundError();
      const body = createReadableStreamFromReadable(found.stream);
      return new Response(body, { headers: { ...headers, "Content-Length": String(found.size) } });
    };
    return original ? asDownload(request, { client: `user:${actor.id}` }, send) : send();
  },
};

export const loader = endpoint(methods);
export const action = endpoint(methods);
