import type { Readable } from "node:stream";
import { findImageObject } from "~/models/images.server";
import { storage } from "~/services/storage.server";
import { actorOf, userFromCookie } from "~/sessions.server";

export interface MediaAnswer {
  status: number;
  headers: Record<string, string>;
  body?: Readable;
}

/**
 * `/media/:imageId/:key`: an image's original or derivative, by its content-addressed key (with `/` written
 * as `~`). Served by server.mjs straight from Express, outside Remix's request pipeline: thumbnails are the most
 * frequent request of all (sixty per grid page) and need no rendering (bench P4). The key changes whenever the
 * content does, so the answer is cached for good; private, as access is checked on every request.
 */
export async function mediaAnswer(req: { cookie: string | null; imageId: string; key: string; ifNoneMatch: string | null; download: boolean; path: string }): Promise<MediaAnswer> {
  const user = await userFromCookie(req.cookie);
  if (!user) return { status: 302, headers: { Location: `/login?redirectTo=${encodeURIComponent(req.path)}`, "Cache-Control": "no-store" } };
  const key = req.key.replaceAll("~", "/");
  const object = await findImageObject(actorOf(user), Number(req.imageId), key);
  const notFound = { status: 404, headers: { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store" }, text: "Not found" };
  if (!object) return { status: notFound.status, headers: notFound.headers };
  const etag = `"${key.split("/").pop()}"`;
  const headers: Record<string, string> = {
    "Cache-Control": "private, max-age=31536000, immutable",
    ETag: etag,
    "Content-Type": object.mimeType,
    "X-Content-Type-Options": "nosniff",
    // Opened on its own, a stored file can never act as a page: no scripts, no subresources, a sandboxed origin.
    "Content-Security-Policy": "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; sandbox",
  };
  if (req.ifNoneMatch === etag) return { status: 304, headers };
  const found = await storage().get(key);
  if (!found) return { status: notFound.status, headers: notFound.headers };
  headers["Content-Length"] = String(found.size);
  if (req.download)
    headers["Content-Disposition"] = `attachment; filename="${object.fileName.replace(/[^\w.\- ]/g, "_")}"; filename*=UTF-8''${encodeURIComponent(object.fileName)}`;
  return { status: 200, headers, body: found.stream };
}
