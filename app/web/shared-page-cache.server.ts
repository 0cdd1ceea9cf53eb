import { recordOpen } from "~/services/share-views.server";
import { resolveSharedUrl, type SharedLookup } from "~/models/share-access.server";
import { config } from "~/config.server";
import { visitorOfCookie } from "~/web/share-visitor.server";
import { themePreference } from "~/web/theme.server";
import { hasFlash } from "~/web/toast.server";
import { PageCache, piecesOf, withNonce } from "../lib/page-cache.server";

/**
 * The public page of a share link is the same for every visitor of a board version, so the HTTP front (server/shared-page.ts) answers repeat
 * views from rendered HTML kept in memory (bench P3; docs/decisions/0011). The link is resolved on every request
 * first (a revoked or expired link stops at once, whatever is cached), the view is counted, and only then is the
 * cache consulted: by link, board version, theme and page (the query). A visitor who reviews (their visitor cookie
 * names this link) or has a toast waiting gets the page rendered for them, never a cached one, and never fills it.
 */

// A page of 60 cards is ~100–150 KiB: 32 MiB holds a few hundred pages.
export const pageCache = new PageCache(1000, 32 * 1024 * 1024);

/** What the shared board's Remix route gets when the fast path did not answer: the link already resolved, once. */
export interface SharedPagePending {
  sharedUrl: string;
  lookup: Promise<SharedLookup>;
  /** Stores the rendered document (status 200, no Set-Cookie) for the next visitor; null when this one's is their own. */
  store: ((html: string, headers: Headers, nonce: string) => void) | null;
}

export type SharedPageAnswer =
  { hit: true; headers: Record<string, string>; body: Buffer[] } | { hit: false; pending: SharedPagePending | null };

export interface SharedPageRequest {
  sharedUrl: string;
  /** The query string, with its `?`, or "". */
  search: string;
  cookie: string | null;
  clientIp: string | null;
  nonce: string;
}

/** The query the page reads (grid paging); anything else, and Remix's data requests, go the usual way. */
const PAGE_PARAMS = new Set(["after", "before", "pos"]);
// Short, and only the page's own parameters: a crafted query cannot fill the cache with copies of one page.
const isPageQuery = (search: string) => search.length <= 160 && [...new URLSearchParams(search).keys()].every((k) => PAGE_PARAMS.has(k));

/**
 * GET `/shared-board/:sharedUrl` ahead of Remix (server/shared-page.ts): the cached page with a fresh nonce, or what the route
 * needs to render it (the resolved link, and where to put the result).
 */
export async function sharedPageAnswer(req: SharedPageRequest): Promise<SharedPageAnswer> {
  if (req.sharedUrl.endsWith(".data") || !isPageQuery(req.search)) return { hit: false, pending: null };
  const lookup = resolveSharedUrl(req.sharedUrl, req.clientIp, config().rateLimit.windowMs);
  const miss = (store: SharedPagePending["store"]): SharedPageAnswer => ({
    hit: false,
    pending: { sharedUrl: req.sharedUrl, lookup, store },
  });
  const found = await lookup.catch(() => null);
  if (found?.status !== "ok") return miss(null); // the route answers 404, 410 or 429 from the same lookup
  const { link, board } = found.scope;
  if ((await hasFlash(req.cookie)) || (await visitorOfCookie(req.cookie, link.id))) return miss(null);
  const key = `${link.id}|${themePreference.readHeader(req.cookie)}|${req.search}`;
  // Link options are fixed today; in the version all the same, so that an editable option could not go stale.
  const version = `${board.version}|${link.allowDownload}|${link.showMetadata}`;
  const entry = pageCache.get(key, version);
  if (!entry)
    return miss((html, headers, nonce) => {
      const { parts, bytes } = piecesOf(html, nonce);
      const kept: Record<string, string> = {};
      headers.forEach((value, name) => {
        if (name !== "set-cookie") kept[name] = value;
      });
      pageCache.set(key, { version, parts, headers: kept, bytes: bytes + key.length });
    });
  const params = new URLSearchParams(req.search);
  if (!params.has("after") && !params.has("before")) recordOpen(found.scope, req.clientIp);
  const { body, length } = withNonce(entry.parts, req.nonce);
  return { hit: true, headers: { ...entry.headers, "content-length": String(length) }, body };
}
