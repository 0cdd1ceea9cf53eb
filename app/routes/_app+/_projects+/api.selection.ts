import type { ActionFunctionArgs } from "@remix-run/node";
import { InvalidError } from "~/lib/errors";
import { selectionJson } from "~/web/grid.server";
import { api } from "~/web/http.server";
import { boardScope, projectScope, withFilter } from "~/models/scope.server";
import { requireActor } from "~/sessions.server";

/** POST /api/selection?project=1 (or ?board=abc, with the grid's filter, `q` and `review`, if any): the grid's background ticks; answers the new selection. */
export const action = api(async ({ request, context }: ActionFunctionArgs) => {
  const actor = await requireActor(request, context);
  const query = new URL(request.url).searchParams;
  const board = query.get("board");
  const project = query.get("project");
  if ((board === null) === (project === null)) throw new InvalidError("Give either project or board");
  const scope = withFilter(board !== null ? await boardScope(actor, board) : await projectScope(actor, project), query);
  return selectionJson(request, scope);
});

export const loader = () => Response.json({ error: "Method not allowed" }, { status: 405, headers: { Allow: "POST" } });
