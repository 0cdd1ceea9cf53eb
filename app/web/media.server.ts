import type { Readable } from "node:stream";
import { buffer } from "node:stream/consumers";
import { config } from "~/config.server";
import { ByteBoundedCache } from "~/lib/bounded-cache";
import { releasingNodeStream, takeDownloadSlot, type DownloadOwner } from "~/lib/download-slots.server";
import { HttpError, NotFoundError } from "~/lib/errors";
import { attachment } from "~/lib/file-names";
import { thumbOfGridKey } from "~/lib/media";
import { findImageObject } from "~/models/images.server";
import { findSharedObject, recordDownload, resolveSharedUrl, sharedImage } from "~/models/share-access.server";
import { ensureGridThumb } from "~/services/grid-thumbs.server";
import { storage } from "~/services/storage.server";
import { signingWindow } from "./media-links.server";
import { actorOf } from "~/models/actor";
import { userFromCookie } from "~/sessions.server";

export interface MediaAnswer {
  status: number;
  headers: Record<string, string>;
  body?: Readable;
  /** The whole body, from memory (a small object sent before). */
  bytes?: Buffer;
  /** The plain-text answer of a refusal. */
  text?: string;
}

/** The largest object kept in memory: thumbnails (~10 KiB) and previews, not originals. */
const KEPT_OBJECT_MAX_BYTES = 512 * 1024;
let kept: ByteBoundedCache<{ bytes: number; data: Buffer }> | null | undefined;
/**
 * Small objects once sent, by key (MEDIA_CACHE_MB; null when 0). A key names the same bytes forever, so an entry is
 * never stale; access is still checked on every request before it is used. Saves the file system (or the bucket)
 * four round trips per thumbnail: bench P4's Node path.
 */
function keptObjects() {
  if (kept === undefined) {
    const mb = config().mediaCacheMb;
    kept = mb > 0 ? new ByteBoundedCache(100_000, mb * 1024 * 1024) : null;
  }
  return kept;
}

interface MediaRequest {
  cookie: string | null;
  imageId: string;
  key: string;
  ifNoneMatch: string | null;
  download: boolean;
  path: string;
}

const refusal = (error: HttpError): MediaAnswer => ({
  status: error.status,
  headers: { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store", ...error.headers },
  text: error.message,
});
const notFound = () => refusal(new NotFoundError());

/** A stored object's headers: its key (content-addressed) as its ETag, and sandboxed. */
export function objectHeaders(key: string, mimeType: string, cacheControl: string): Record<string, string> {
  return {
    "Cache-Control": cacheControl,
    ETag: `"${key.split("/").pop()}"`,
    "Content-Type": mimeType,
    "X-Content-Type-Options": "nosniff",
    // Opened on its own, a stored file can never act as a page: no scripts, no subresources, a sandboxed origin.
    "Content-Security-Policy": "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; sandbox",
  };
}

/**
 * The stored object's answer, once access is settled: streamed, with its validators and a sandboxed CSP. A download
 * (an original asked for as a file) holds a download place of `owner`'s while it streams, or is refused with 429.
 */
async function objectAnswer(
  object: { mimeType: string; fileName: string },
  key: string,
  req: MediaRequest,
  cacheControl: string,
  owner: DownloadOwner,
  shared = false,
): Promise<MediaAnswer> {
  const headers = objectHeaders(key, object.mimeType, cacheControl);
  if (req.ifNoneMatch === headers.ETag) return { status: 304, headers };
  // A grid thumbnail is made on its first request when its image was stored before there were any.
  if (thumbOfGridKey(key) && !(await ensureGridThumb(key))) return notFound();
  if (!req.download) {
    const handedOff = await offloaded(key, object, headers, shared);
    if (handedOff) return handedOff;
  }
  const memory = req.download ? null : keptObjects();
  const inMemory = memory?.get(key);
  if (inMemory) return { status: 200, headers: { ...headers, "Content-Length": String(inMemory.data.length) }, bytes: inMemory.data };
  let release = () => {};
  if (req.download) {
    try {
      release = takeDownloadSlot(owner);
    } catch (error) {
      if (error instanceof HttpError) return refusal(error);
      throw error;
    }
  }
  const found = await storage()
    .get(key)
    .catch((error: unknown) => {
      release();
      throw error;
    });
  if (!found) {
    release();
    return notFound();
  }
  headers["Content-Length"] = String(found.size);
  if (memory && found.size <= KEPT_OBJECT_MAX_BYTES) {
    const data = await buffer(found.stream);
    memory.set(key, { bytes: data.length + key.length, data });
    return { status: 200, headers, bytes: data };
  }
  if (req.download) headers["Content-Disposition"] = attachment(object.fileName);
  return { status: 200, headers, body: releasingNodeStream(found.stream, release) };
}

/**
 * With MEDIA_OFFLOAD, the sending is handed to nginx or S3 once access is settled (the app answers in a few hundred
 * bytes; bench P4); null: the app sends the bytes itself.
 * - `x-accel`: nginx's internal location (docs/deploy/nginx.conf) sends the file. nginx keeps Content-Type and
 *   Cache-Control from this answer and drops the rest, so that location sets the sandboxing headers itself.
 * - `presigned`: a redirect to a GET URL signed at the start of the current half of its lifetime, so the URL is
 *   the same (and the browser's cached copy good) for half its life and valid for at least that long. A share
 *   link's redirect is never cached: its access is checked on every view, as when the app sends the bytes.
 */
export async function offloaded(
  key: string,
  object: { mimeType: string },
  headers: Record<string, string>,
  shared: boolean,
): Promise<MediaAnswer | null> {
  const { offload, accelPrefix, urlMs } = config().media;
  // `signed`: a thumbnail URL without a valid signature reaches the app through the same nginx.
  if (offload === "x-accel" || offload === "signed")
    return { status: 200, headers: { ...headers, "X-Accel-Redirect": `${accelPrefix}${key}` } };
  const store = storage();
  if (offload !== "presigned" || !store.presignedGet) return null;
  const { signedAt, leftMs } = signingWindow(urlMs);
  const url = await store.presignedGet(key, {
    signedAt: new Date(signedAt),
    expiresInSeconds: urlMs / 1000,
    contentType: object.mimeType,
    cacheControl: headers["Cache-Control"]!,
  });
  const left = Math.floor(leftMs / 1000);
  return { status: 302, headers: { Location: url, "Cache-Control": shared ? "no-store" : `private, max-age=${left}` } };
}

/**
 * `/media/:imageId/:key`: an image's original or derivative, by its content-addressed key (with `/` written
 * as `~`). Served by the HTTP front (server/index.ts) straight from Express, outside Remix's request pipeline: thumbnails are the most
 * frequent request of all (sixty per grid page) and need no rendering (bench P4). The key changes whenever the
 * content does, so the answer is cached for good; private, as access is checked on every request.
 */
export async function mediaAnswer(req: MediaRequest): Promise<MediaAnswer> {
  const user = await userFromCookie(req.cookie);
  if (!user)
    return { status: 302, headers: { Location: `/login?redirectTo=${encodeURIComponent(req.path)}`, "Cache-Control": "no-store" } };
  const key = req.key.replaceAll("~", "/");
  const object = await findImageObject(actorOf(user), Number(req.imageId), key);
  return object ? objectAnswer(object, key, req, "private, max-age=31536000, immutable", { client: `user:${user.id}` }) : notFound();
}

/**
 * `/shared-media/:sharedUrl/:imageId/:key`: the same for a share link's visitor, checked on every request: the link
 * is valid, the image is on its board now, and an original only when the link allows downloads. Revalidated on
 * every view (no long cache), so a removed image or a revoked link is cut off at once.
 */
export async function sharedMediaAnswer(req: MediaRequest & { sharedUrl: string; clientIp: string | null }): Promise<MediaAnswer> {
  const found = await resolveSharedUrl(req.sharedUrl, req.clientIp, config().rateLimit.windowMs).catch(() => null);
  if (found?.status !== "ok") return notFound();
  const key = req.key.replaceAll("~", "/");
  const object = await findSharedObject(found.scope, Number(req.imageId), key);
  if (!object) return notFound();
  // A download is the original, on a link that allows it; its file name only where the link shows metadata.
  const download =
    req.download && found.scope.link.allowDownload && key === (await sharedImage(found.scope, Number(req.imageId))).storage_key;
  if (download) await recordDownload(found.scope);
  const named = found.scope.link.showMetadata ? object : { ...object, fileName: `image-${req.imageId}${extensionOf(object.fileName)}` };
  const owner = { client: `ip:${req.clientIp ?? ""}`, link: `link:${found.scope.link.id}` };
  const answer = await objectAnswer(named, key, { ...req, download }, "private, no-cache", owner, true);
  answer.headers["Referrer-Policy"] = "no-referrer";
  answer.headers["X-Robots-Tag"] = "noindex";
  return answer;
}

const extensionOf = (name: string) => /\.[A-Za-z0-9]{1,5}$/.exec(name)?.[0] ?? "";
