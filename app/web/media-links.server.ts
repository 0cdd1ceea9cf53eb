import { createHash } from "node:crypto";
import { config } from "~/config.server";
import { gridThumbKey, mediaUrl } from "~/lib/media";
import type { GridScope } from "~/models/scope.server";

/**
 * The signing window of a media URL that lives `urlMs`: signed at the start of the current half of its lifetime,
 * so the URL is the same (and the browser's cached copy good) for half its life, and valid at least that long.
 * Shared by the presigned redirects (S3) and the signed thumbnail URLs (nginx).
 */
export function signingWindow(urlMs: number, now = Date.now()) {
  const half = urlMs / 2;
  const signedAt = Math.floor(now / half) * half;
  return { signedAt, expiresAt: signedAt + urlMs, leftMs: signedAt + half - now };
}

/**
 * The URL a page shows for a thumbnail the loader has just checked the person may see. With MEDIA_OFFLOAD=signed it
 * carries an expiry and a signature nginx's secure_link module checks on its own (MD5 of the expiry, the path and
 * the shared MEDIA_URL_SECRET, base64url: docs/deploy/nginx-signed-media.conf), so nginx sends the file without
 * asking the app. A signature past its time or wrong sends the request on to the app, which checks the session and
 * access as for any /media URL; without nginx the app ignores the two parameters. docs/decisions/0007.
 */
export function thumbUrl(imageId: number, key: string, now = Date.now()): string {
  const url = mediaUrl(imageId, key);
  if (!signsThumbs()) return url;
  const { urlMs, urlSecret } = config().media;
  const expires = Math.floor(signingWindow(urlMs, now).expiresAt / 1000);
  const signature = createHash("md5").update(`${expires}${url} ${urlSecret}`).digest("base64url");
  return `${url}?e=${expires}&s=${signature}`;
}

/** Whether thumbnail URLs carry a signature (MEDIA_OFFLOAD=signed with its secret): otherwise each is made from its key. */
const signsThumbs = () => {
  const { offload, urlSecret } = config().media;
  return offload === "signed" && Boolean(urlSecret);
};

/**
 * A grid's cards as its page shows them: each with its two thumbnails' signed URLs where MEDIA_OFFLOAD=signed. Unsigned,
 * a card's URL is made from its key where it is shown (`mediaUrl`), so the page's data does not carry each twice (a
 * third of a project page's loader data, bench P2-first). Never signed for a share link's visitor, who is checked on
 * every image (/shared-media) so that a revoked link is cut off at once: a signed URL would outlive it.
 */
export const withThumbUrls = <T extends { id: number; thumbKey: string }>(
  scope: GridScope,
  cards: T[],
): (T & { thumbUrl?: string; gridUrl?: string })[] =>
  scope.kind === "shared" || !signsThumbs()
    ? cards
    : cards.map((card) => ({
        ...card,
        thumbUrl: thumbUrl(card.id, card.thumbKey),
        gridUrl: thumbUrl(card.id, gridThumbKey(card.thumbKey)),
      }));

/** Board cards as a page shows them: the cover with its thumbnail's signed URL where MEDIA_OFFLOAD=signed (as cards). */
export const withCoverUrls = <T extends { cover: { imageId: number; thumbKey: string } | null }>(
  boards: T[],
): (T & { cover: (NonNullable<T["cover"]> & { thumbUrl?: string }) | null })[] =>
  !signsThumbs()
    ? boards
    : boards.map((board) => ({
        ...board,
        cover: board.cover && { ...board.cover, thumbUrl: thumbUrl(board.cover.imageId, board.cover.thumbKey) },
      }));

/** What changes a page's signed URLs: part of a validator (ETag) of an answer that carries them. */
export const thumbUrlEpoch = () => {
  const { offload, urlMs } = config().media;
  return offload === "signed" ? String(signingWindow(urlMs).signedAt) : "";
};
