import { data, redirect } from "@remix-run/node";
import { z } from "zod";
import { NotFoundError, type Actor } from "~/models/actor";
import { decodeCursor, gridPage, gridTotal, gridVersion, idsInScope, type GridScope } from "~/models/grid.server";
import { flashToast, MAX_PICKED, readSelection, selectionCookie, type Selection } from "~/sessions.server";

import { PAGE_SIZE } from "./grid";

export const scopeKey = (scope: GridScope) => (scope.kind === "project" ? `p:${scope.projectId}` : `b:${scope.boardId}`);

/** Model "not found" becomes a 404 response carrying the spec's message. */
export async function orNotFound<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof NotFoundError) throw data({ message: error.message }, { status: 404 });
    throw error;
  }
}

const PageQuery = z.object({
  after: z.string().max(64).optional().catch(undefined),
  before: z.string().max(64).optional().catch(undefined),
  pos: z.coerce.number().int().min(0).optional().catch(undefined),
});

/** A grid page for a route loader: the cards, where they sit in the whole set, and the selection. */
export async function loadGrid(request: Request, actor: Actor, scope: GridScope) {
  const query = PageQuery.parse(Object.fromEntries(new URL(request.url).searchParams));
  const after = decodeCursor(query.after);
  const before = decodeCursor(query.before);
  const [page, total, version, selection] = await Promise.all([
    orNotFound(() => gridPage(actor, scope, { after, before, limit: PAGE_SIZE })),
    orNotFound(() => gridTotal(actor, scope)),
    orNotFound(() => gridVersion(actor, scope)),
    readSelection(request, scopeKey(scope)),
  ]);
  // Position of the first card: carried in the links, since a keyset cursor does not know it.
  const pos = after || before ? Math.min(query.pos ?? 0, Math.max(0, total - page.cards.length)) : 0;
  const selected = selection.all ? total - selection.ids.length : selection.ids.length;
  return { ...page, total, pos, version, selection: { all: selection.all, ids: selection.ids, count: Math.max(0, selected) } };
}

const SelectionAction = z.object({
  intent: z.enum(["select-all", "deselect-all", "update"]),
  page: z.array(z.coerce.number().int().positive()).max(500).default([]),
  ids: z.array(z.coerce.number().int().positive()).max(500).default([]),
});

/**
 * Selection changes, posted by the grid form (with or without JavaScript). Select all means the
 * whole filtered set on the server; unticking then records exceptions.
 */
export async function updateSelection(request: Request, actor: Actor, scope: GridScope) {
  const form = await request.formData();
  const parsed = SelectionAction.safeParse({ intent: form.get("intent"), page: form.getAll("page"), ids: form.getAll("ids") });
  const back = new URL(request.url);
  if (!parsed.success) throw redirect(back.pathname + back.search);
  const current = await readSelection(request, scopeKey(scope));
  // Only ids of this scope count: a forged id from elsewhere is dropped, never stored.
  const valid = new Set(await orNotFound(() => idsInScope(actor, scope, [...new Set([...parsed.data.page, ...parsed.data.ids])])));
  const page = parsed.data.page.filter((id) => valid.has(id));
  const ticked = new Set(parsed.data.ids.filter((id) => valid.has(id)));
  let next: Selection;
  if (parsed.data.intent === "select-all") next = { scope: current.scope, all: true, ids: [] };
  else if (parsed.data.intent === "deselect-all") next = { scope: current.scope, all: false, ids: [] };
  else {
    const onPage = new Set(page);
    const kept = current.ids.filter((id) => !onPage.has(id));
    next = current.all
      ? { scope: current.scope, all: true, ids: [...kept, ...page.filter((id) => !ticked.has(id))] }
      : { scope: current.scope, all: false, ids: [...kept, ...ticked] };
  }
  const headers = new Headers();
  if (next.ids.length > MAX_PICKED) {
    headers.append(
      "Set-Cookie",
      await flashToast(request, { kind: "error", title: `At most ${MAX_PICKED} images can be picked one by one`, description: "Use Select all for larger sets." }),
    );
  } else headers.append("Set-Cookie", await selectionCookie(next));
  return redirect(back.pathname + back.search, { headers });
}
