import { data } from "@remix-run/node";
import { config } from "~/config.server";
import type { SharedPagePending } from "~/web/shared-page-cache.server";
import { resolveSharedUrl } from "~/models/share-access.server";
import { withFilter, type SharedBoardScope } from "~/models/scope.server";

/** The spec's answer to a missing, malformed or unknown share URL. */
export const INVALID_URL = { message: "Invalid URL", detail: "The URL is invalid" } as const;

/**
 * The board a share link opens, or the answer a visitor gets instead: 404 'Invalid URL' for anything that is not a
 * live link, 410 with who to ask for an expired or revoked one.
 */
export async function sharedScope(
  rawUrl: string | undefined,
  context: { clientIp?: string; sharedPage?: SharedPagePending | null },
): Promise<SharedBoardScope> {
  // The board page's link was resolved by the page cache's fast path already: once per request (a failed look-up
  // counts once against the rate limit).
  const found =
    context.sharedPage && context.sharedPage.sharedUrl === rawUrl
      ? await context.sharedPage.lookup
      : await resolveSharedUrl(rawUrl, context.clientIp ?? null, config().rateLimit.windowMs);
  if (found.status === "invalid") throw data(INVALID_URL, { status: 404, headers: SHARED_HEADERS });
  if (found.status === "gone")
    throw data(
      {
        message: found.reason === "expired" ? "This link has expired" : "This link was revoked",
        detail: found.contact
          ? `Please ask ${found.contact.name || found.contact.email} (${found.contact.email}) for a new link.`
          : "Please ask the person who shared it with you for a new link.",
      },
      { status: 410, headers: SHARED_HEADERS },
    );
  return found.scope;
}

/** Every answer about a share link: no referrer (the token is in the URL), not indexed, not stored. */
export const SHARED_HEADERS = {
  "Referrer-Policy": "no-referrer",
  "X-Robots-Tag": "noindex, nofollow",
  "Cache-Control": "private, no-store",
} as const;

/** A card or image of a shared board as the link allows it to be seen: without metadata, only the picture. */
export function withoutMetadata<T extends { title: string; keywords: string[] }>(card: T, showMetadata: boolean): T {
  return showMetadata ? card : { ...card, title: "", keywords: [] };
}

/**
 * The shared board's grid as the visitor narrowed it (keyword search `?q=`, attribute values `?f=`). A link that hides
 * metadata offers neither: matching on titles, keywords or attributes would reveal them one guess at a time.
 */
export const searchable = (scope: SharedBoardScope, from: Request | URLSearchParams): SharedBoardScope =>
  scope.link.showMetadata ? withFilter(scope, from) : scope;
