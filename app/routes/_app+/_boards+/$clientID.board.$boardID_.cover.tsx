import type { ActionFunctionArgs, LoaderFunctionArgs } from "@remix-run/node";
import { redirect } from "@remix-run/node";
import { page, readForm, redirectWithToast } from "~/web/http.server";
import { setCover } from "~/models/boards.server";
import { boardScope, parseId, requireEdit } from "~/models/scope.server";
import { requireActor } from "~/sessions.server";

/** "Set as cover" from a card's menu on a board (posted through the grid's form with its own formAction). */
export const action = page(async ({ request, params }: ActionFunctionArgs) => {
  const scope = requireEdit(await boardScope(await requireActor(request), params.boardID, params.clientID));
  const imageId = parseId((await readForm(request)).get("imageId"));
  await setCover(scope, imageId ?? -1);
  return redirectWithToast(request, `/${scope.project.id}/board/${scope.board.id}`, { kind: "success", title: "Cover image set" });
});

export const loader = ({ params }: LoaderFunctionArgs) => redirect(`/${params.clientID}/board/${params.boardID}`);
