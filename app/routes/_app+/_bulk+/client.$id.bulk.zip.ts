import type { ActionFunctionArgs } from "@remix-run/node";
import { bulkFile } from "~/routes/_app+/_bulk+/bulk-page.server";
import { api } from "~/web/http.server";
import { projectScope, withFilter } from "~/models/scope.server";
import { requestMeta, requireActor } from "~/sessions.server";

/** POST /client/:id/bulk/zip: the selection as one ZIP (originals and images.csv), posted from the Download page (a resource route, so the answer is the file). */
export const action = api(async ({ request, params, context }: ActionFunctionArgs) =>
  bulkFile(request, withFilter(await projectScope(await requireActor(request), params.id), request), "zip", requestMeta(request, context)),
);
