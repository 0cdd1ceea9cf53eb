import type { ActionFunctionArgs, LoaderFunctionArgs } from "@remix-run/node";
import { z } from "zod";
import { sha256 } from "~/lib/crypto.server";
import { InvalidError } from "~/lib/errors";
import { api, readJson } from "~/web/http.server";
import { searchable, sharedScope, SHARED_HEADERS, withoutMetadata } from "~/routes/_shared-board+/shared-page.server";
import { cursorBefore, decodeCursor, gridPage, gridTotal } from "~/models/grid.server";
import { scopeVersion } from "~/models/scope.server";
import { visitorMarks } from "~/models/share-reviews.server";
import { readVisitor } from "~/web/share-visitor.server";

const Query = z.object({
  sharedUrl: z.string().max(300),
  q: z.string().max(400).optional(),
  at: z.coerce.number().int().min(0).max(100_000_000).optional(),
  after: z.string().max(64).optional(),
  limit: z.coerce.number().int().min(1).max(300).default(100),
  check: z.literal("version").optional(),
});

/** A page of a shared board's cards, as the link allows them to be seen (and the visitor's own marks). */
async function page(request: Request, context: { clientIp?: string }, q: z.infer<typeof Query>, etagBase: string, filter: URLSearchParams) {
  const scope = searchable(await sharedScope(q.sharedUrl, context), filter);
  const version = String(scopeVersion(scope));
  if (q.check) return Response.json({ version }, { headers: { ...SHARED_HEADERS, "Cache-Control": "no-store" } });
  const visitor = await readVisitor(request, scope.link.id);
  const etag = `W/"${sha256(`${scope.link.id}|${version}|${visitor?.key ?? ""}|${etagBase}`).slice(0, 24)}"`;
  const headers = { ...SHARED_HEADERS, ETag: etag, "Cache-Control": "private, no-cache" };
  if (request.headers.get("If-None-Match") === etag) return new Response(null, { status: 304, headers });
  const after = q.after ? decodeCursor(q.after) : q.at ? await cursorBefore(scope, q.at) : null;
  const [grid, total] = await Promise.all([gridPage(scope, { after, limit: q.limit }), gridTotal(scope)]);
  const marks = await visitorMarks(
    scope,
    visitor,
    grid.cards.map((c) => c.id),
  );
  const cards = grid.cards.map((c) => ({ ...withoutMetadata(c, scope.link.showMetadata), mark: marks.get(c.id)?.mark ?? null }));
  return Response.json({ success: true, images: cards, cards, next: grid.next, total, version, updated_at: Number(version) }, { headers });
}

/**
 * The shared board's images for the link's visitor, scoped to the token. GET (?sharedUrl=…, the virtual grid;
 * ETag/304) or the spec's POST `{ sharedBoardToken, boardID }`.
 */
export const loader = api(async ({ request, context }: LoaderFunctionArgs) => {
  const url = new URL(request.url);
  const parsed = Query.safeParse(Object.fromEntries(url.searchParams));
  if (!parsed.success) throw new InvalidError("Data format error");
  return page(request, context, parsed.data, url.search, url.searchParams);
});

const Body = z.object({
  sharedBoardToken: z.string().min(1).max(200),
  boardID: z.string().min(1).max(64),
  after: z.string().max(64).optional(),
});

export const action = api(async ({ request, context }: ActionFunctionArgs) => {
  const parsed = Body.safeParse(await readJson(request));
  if (!parsed.success) throw new InvalidError("Data format error");
  const { sharedBoardToken, boardID, after } = parsed.data;
  return page(
    request,
    context,
    { sharedUrl: `${boardID}:${sharedBoardToken}`, limit: 100, after },
    JSON.stringify(parsed.data),
    new URLSearchParams(),
  );
});
