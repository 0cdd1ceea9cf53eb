import type { ActionFunctionArgs } from "@remix-run/node";
import { bulkFile } from "~/routes/_app+/_bulk+/bulk-page.server";
import { api } from "~/web/http.server";
import { requestMeta } from "~/sessions.server";
import { boardScopeOf } from "~/web/scopes.server";

/** POST /:clientID/board/:boardID/bulk/csv: the selection's metadata and attribute values as CSV, posted from the Download page (a resource route, so the answer is the file). */
export const action = api(async ({ request, params, context }: ActionFunctionArgs) =>
  bulkFile(request, await boardScopeOf({ request, context }, params, { filtered: true }), "csv", requestMeta(request, context)),
);
