import { redirect } from "@remix-run/node";
import { z } from "zod";
import { decodeCursor, gridPage, gridTotal, idsInScope } from "~/models/grid.server";
import { scopeKey, scopeVersion, type GridScope } from "~/models/scope.server";
import { MAX_PICKED, readSelection, selectionCookie, type Selection } from "~/web/selection.server";
import { flashToast } from "~/web/toast.server";
import { withThumbUrls } from "./media-links.server";
import { readForm } from "./http.server";

import { isBulkOp } from "../lib/bulk-ops";
import { PAGE_SIZE } from "../lib/grid";

const PageQuery = z.object({
  after: z.string().max(64).optional().catch(undefined),
  before: z.string().max(64).optional().catch(undefined),
  pos: z.coerce.number().int().min(0).optional().catch(undefined),
});

/** A grid page for a route loader: the cards, where they sit in the whole set, and the selection (when the scope has one). */
export async function loadGrid(request: Request, scope: GridScope) {
  const query = PageQuery.parse(Object.fromEntries(new URL(request.url).searchParams));
  const after = decodeCursor(query.after);
  const before = decodeCursor(query.before);
  const [page, total, selection] = await Promise.all([
    gridPage(scope, { after, before, limit: PAGE_SIZE }),
    gridTotal(scope),
    scope.can.select ? readSelection(request, scopeKey(scope)) : null,
  ]);
  // Position of the first card: carried in the links, since a keyset cursor does not know it.
  const pos = after || before ? Math.min(query.pos ?? 0, Math.max(0, total - page.cards.length)) : 0;
  const selected = selection ? Math.max(0, selection.all ? total - selection.ids.length : selection.ids.length) : 0;
  return {
    ...page,
    cards: withThumbUrls(scope, page.cards),
    total,
    pos,
    version: String(scopeVersion(scope)),
    selection: selection ? { all: selection.all, ids: selection.ids, count: selected } : null,
  };
}

const SelectionAction = z.object({
  intent: z.union([z.enum(["select-all", "deselect-all", "update"]), z.string().regex(/^bulk:[a-z]+$/)]),
  page: z.array(z.coerce.number().int().positive()).max(500).default([]),
  ids: z.array(z.coerce.number().int().positive()).max(500).default([]),
});

const TOO_MANY = `At most ${MAX_PICKED} images can be picked one by one`;

/**
 * A selection change as posted (select all, deselect all, or the ticks of some cards: `page` lists the cards the
 * post speaks for, `ids` those of them ticked). Select all means the whole filtered set on the server; unticking
 * then records exceptions. Only ids of the scope count: a forged id from elsewhere is dropped, never stored.
 */
async function changeSelection(request: Request, scope: GridScope, form: FormData) {
  const parsed = SelectionAction.safeParse({ intent: form.get("intent"), page: form.getAll("page"), ids: form.getAll("ids") });
  if (!parsed.success) return null;
  const current = await readSelection(request, scopeKey(scope));
  const valid = new Set(await idsInScope(scope, [...parsed.data.page, ...parsed.data.ids]));
  const page = parsed.data.page.filter((id) => valid.has(id));
  const ticked = new Set(parsed.data.ids.filter((id) => valid.has(id)));
  const intent = parsed.data.intent;
  let next: Selection;
  if (intent === "select-all") next = { scope: current.scope, all: true, ids: [] };
  else if (intent === "deselect-all") next = { scope: current.scope, all: false, ids: [] };
  else {
    const onPage = new Set(page);
    const kept = current.ids.filter((id) => !onPage.has(id));
    next = current.all
      ? { scope: current.scope, all: true, ids: [...kept, ...page.filter((id) => !ticked.has(id))] }
      : { scope: current.scope, all: false, ids: [...kept, ...ticked] };
  }
  const tooMany = next.ids.length > MAX_PICKED;
  return { intent, kept: tooMany ? current : next, tooMany, cookie: tooMany ? null : await selectionCookie(next) };
}

/**
 * The grid page's form (without JavaScript every change; with it Select all, Deselect all and the bulk actions):
 * back to the page, or on to a bulk action's confirmation page with the selection as posted.
 */
export async function updateSelection(request: Request, scope: GridScope) {
  const form = await readForm(request);
  const back = new URL(request.url);
  const change = await changeSelection(request, scope, form);
  if (!change) throw redirect(back.pathname + back.search);
  const headers = new Headers();
  if (change.cookie) headers.append("Set-Cookie", change.cookie);
  else
    headers.append(
      "Set-Cookie",
      await flashToast(request, { kind: "error", title: TOO_MANY, description: "Use Select all for larger sets." }),
    );
  const op = change.intent.startsWith("bulk:") ? change.intent.slice(5) : null;
  if (op && isBulkOp(op) && !change.tooMany) return redirect(`${back.pathname}/bulk/${op}${back.search}`, { headers });
  return redirect(back.pathname + back.search, { headers });
}

/**
 * With JavaScript each tick is posted here in the background (POST /api/selection): one request, the new selection
 * as JSON, no navigation and no revalidation, so scroll and focus stay where they are.
 */
export async function selectionJson(request: Request, scope: GridScope) {
  const change = await changeSelection(request, scope, await readForm(request));
  if (!change) return Response.json({ error: "Data format error" }, { status: 400 });
  const total = await gridTotal(scope);
  const count = Math.max(0, change.kept.all ? total - change.kept.ids.length : change.kept.ids.length);
  return Response.json(
    { selection: { all: change.kept.all, ids: change.kept.ids, count }, error: change.tooMany ? TOO_MANY : null },
    { headers: change.cookie ? { "Set-Cookie": change.cookie, "Cache-Control": "no-store" } : { "Cache-Control": "no-store" } },
  );
}
