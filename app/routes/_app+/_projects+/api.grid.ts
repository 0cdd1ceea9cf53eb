import type { LoaderFunctionArgs } from "@remix-run/node";
import { z } from "zod";
import { sha256 } from "~/lib/crypto.server";
import { InvalidError } from "~/lib/errors";
import { api } from "~/web/http.server";
import { thumbUrlEpoch, withThumbUrls } from "~/web/media-links.server";
import { attributeFacets, facetsFingerprint } from "~/models/facets.server";
import { cursorBefore, decodeCursor, gridPage, gridTotal } from "~/models/grid.server";
import { REVIEW_FILTERS } from "~/lib/grid-filter";
import { allProjectsScope, boardScope, projectScope, scopeVersion, withFilter } from "~/models/scope.server";
import { requireActor } from "~/sessions.server";

const Query = z
  .object({
    project: z.string().max(80).optional(),
    board: z.string().min(1).max(64).optional(),
    /** Every project of the actor (the cross-project search's result). */
    everywhere: z.literal("1").optional(),
    review: z.enum(REVIEW_FILTERS).optional(),
    q: z.string().max(400).optional(),
    at: z.coerce.number().int().min(0).max(100_000_000).optional(),
    after: z.string().max(64).optional(),
    limit: z.coerce.number().int().min(1).max(300).default(100),
    /** Only the scope's version: the open grid's cheap "is there newer data?" check. */
    check: z.literal("version").optional(),
  })
  .refine((q) => [q.project, q.board, q.everywhere].filter((v) => v !== undefined).length === 1, "Give one of project, board, everywhere");

/**
 * A page of grid cards as JSON, for the virtual grid: from a position (`at`, for jumps) or after a cursor
 * (sequential scrolling). Answers carry an ETag built from the scope's version, so an unchanged page costs a 304.
 * A project or board outside the actor's reach answers 404 with the spec's message, as JSON.
 */
export const loader = api(async ({ request, context }: LoaderFunctionArgs) => {
  const actor = await requireActor(request, context);
  const url = new URL(request.url);
  const parsed = Query.safeParse(Object.fromEntries(url.searchParams));
  if (!parsed.success) throw new InvalidError("Data format error");
  const q = parsed.data;
  const scope = withFilter(
    q.everywhere
      ? await allProjectsScope(actor)
      : q.board !== undefined
        ? await boardScope(actor, q.board)
        : await projectScope(actor, q.project),
    url.searchParams,
  );
  const version = String(scopeVersion(scope));
  if (q.check) {
    // Every attribute or value write moves the version on: while the tab's version is current, its filters are too
    // (no facet count on the 20-second poll of every open tab).
    const unchanged = url.searchParams.get("v") === version;
    const filters = scope.kind === "all" || unchanged ? null : facetsFingerprint(await attributeFacets({ ...scope, filter: undefined }));
    return Response.json({ version, filters }, { headers: { "Cache-Control": "no-store" } });
  }
  // Across projects the version does not follow the person's memberships: never revalidated from a cache.
  const etag = scope.kind === "all" ? null : `W/"${sha256(`${version}|${url.search}|${thumbUrlEpoch()}`).slice(0, 24)}"`;
  const headers: Record<string, string> = etag
    ? { ETag: etag, "Cache-Control": "private, no-cache" }
    : { "Cache-Control": "private, no-store" };
  if (etag && request.headers.get("If-None-Match") === etag) return new Response(null, { status: 304, headers });
  const after = q.after ? decodeCursor(q.after) : q.at ? await cursorBefore(scope, q.at) : null;
  const [page, total] = await Promise.all([gridPage(scope, { after, limit: q.limit }), gridTotal(scope)]);
  return Response.json({ cards: withThumbUrls(scope, page.cards), next: page.next, total, version }, { headers });
});
