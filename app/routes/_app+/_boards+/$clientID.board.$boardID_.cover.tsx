import type { ActionFunctionArgs, LoaderFunctionArgs } from "@remix-run/node";
import { redirect } from "@remix-run/node";
import { page, readForm, redirectWithToast } from "~/web/http.server";
import { setCover } from "~/models/boards.server";
import { parseId } from "~/models/scope.server";
import { boardScopeOf } from "~/web/scopes.server";

/** "Set as cover" from a card's menu on a board (posted through the grid's form with its own formAction). */
export const action = page(async ({ request, params, context }: ActionFunctionArgs) => {
  const scope = await boardScopeOf({ request, context }, params, { need: "write" });
  const imageId = parseId((await readForm(request)).get("imageId"));
  await setCover(scope, imageId ?? -1);
  return redirectWithToast(request, `/${scope.project.id}/board/${scope.board.id}`, { kind: "success", title: "Cover image set" });
});

export const loader = ({ params }: LoaderFunctionArgs) => redirect(`/${params.clientID}/board/${params.boardID}`);
