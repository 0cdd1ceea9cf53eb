import type { LoaderFunctionArgs } from "@remix-run/node";
import { z } from "zod";
import { sha256 } from "~/lib/crypto.server";
import { orNotFound } from "~/lib/grid.server";
import { cursorBefore, decodeCursor, gridPage, gridTotal, gridVersion, type GridScope } from "~/models/grid.server";
import { requireActor } from "~/sessions.server";

const Query = z
  .object({
    project: z.coerce.number().int().positive().optional(),
    board: z.string().min(1).max(64).optional(),
    at: z.coerce.number().int().min(0).max(100_000_000).optional(),
    after: z.string().max(64).optional(),
    limit: z.coerce.number().int().min(1).max(300).default(100),
    /** Only the scope's version: the open grid's cheap "is there newer data?" check. */
    check: z.literal("version").optional(),
  })
  .refine((q) => Boolean(q.project) !== Boolean(q.board), "Give either project or board");

/**
 * A page of grid cards as JSON, for the virtual grid: from a position (`at`, for jumps) or after a
 * cursor (sequential scrolling). Answers carry an ETag built from the scope's version, so an
 * unchanged page costs a 304.
 */
export async function loader({ request }: LoaderFunctionArgs) {
  const actor = await requireActor(request);
  const url = new URL(request.url);
  const parsed = Query.safeParse(Object.fromEntries(url.searchParams));
  if (!parsed.success) return Response.json({ error: "Data format error" }, { status: 400 });
  const q = parsed.data;
  const scope: GridScope = q.project ? { kind: "project", projectId: q.project } : { kind: "board", boardId: q.board! };
  const version = await orNotFound(() => gridVersion(actor, scope));
  if (q.check) return Response.json({ version }, { headers: { "Cache-Control": "no-store" } });
  const etag = `W/"${sha256(`${version}|${url.search}`).slice(0, 24)}"`;
  const headers = { ETag: etag, "Cache-Control": "private, no-cache" };
  if (request.headers.get("If-None-Match") === etag) return new Response(null, { status: 304, headers });
  const after = q.after ? decodeCursor(q.after) : q.at ? await cursorBefore(actor, scope, q.at) : null;
  const [page, total] = await Promise.all([gridPage(actor, scope, { after, limit: q.limit }), gridTotal(actor, scope)]);
  return Response.json({ cards: page.cards, next: page.next, total, version }, { headers });
}
