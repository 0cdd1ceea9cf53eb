import { Readable } from "node:stream";
import type { LoaderFunctionArgs } from "@remix-run/node";
import { findImageObject } from "~/models/images.server";
import { storage } from "~/services/storage.server";
import { requireActor } from "~/sessions.server";

/**
 * An image's original or derivative, by its content-addressed key (with `/` written as `~`).
 * The key changes whenever the content does, so the answer is cached for good; private, as access is checked.
 */
export async function loader({ request, params }: LoaderFunctionArgs) {
  const actor = await requireActor(request);
  const key = (params.key ?? "").replaceAll("~", "/");
  const object = await findImageObject(actor, Number(params.imageId), key);
  if (!object) return new Response("Not found", { status: 404 });
  const etag = `"${key.split("/").pop()}"`;
  const headers = {
    "Cache-Control": "private, max-age=31536000, immutable",
    ETag: etag,
    "Content-Type": object.mimeType,
    "X-Content-Type-Options": "nosniff",
    // Opened on its own, a stored file can never act as a page: no scripts, no subresources, a sandboxed origin.
    "Content-Security-Policy": "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; sandbox",
  };
  if (request.headers.get("If-None-Match") === etag) return new Response(null, { status: 304, headers });
  const found = await storage().get(key);
  if (!found) return new Response("Not found", { status: 404 });
  const out = new Headers({ ...headers, "Content-Length": String(found.size) });
  if (new URL(request.url).searchParams.has("download"))
    out.set("Content-Disposition", `attachment; filename="${object.fileName.replace(/[^\w.\- ]/g, "_")}"; filename*=UTF-8''${encodeURIComponent(object.fileName)}`);
  return new Response(Readable.toWeb(found.stream) as ReadableStream, { headers: out });
}
