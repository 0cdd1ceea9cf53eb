import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { BulkPage } from "~/components/bulk-page";
import { GeneralErrorBoundary } from "~/components/error-boundary";
import { bulkPageAction, bulkPageData } from "~/routes/_app+/_bulk+/bulk-page.server";
import { page } from "~/web/http.server";
import { boardScope, withFilter } from "~/models/scope.server";
import { requireActor } from "~/sessions.server";

export const meta: MetaFunction = () => [{ title: "Bulk action | Koala" }];

/** A bulk action on a board's selection: /:clientID/board/:boardID/bulk/:op (download, move, copy, keywords, remove, data). */
export const loader = page(async ({ request, params }: LoaderFunctionArgs) =>
  bulkPageData(request, withFilter(await boardScope(await requireActor(request), params.boardID, params.clientID), request), params.op),
);

export const action = page(async ({ request, params }: ActionFunctionArgs) =>
  bulkPageAction(request, withFilter(await boardScope(await requireActor(request), params.boardID, params.clientID), request), params.op),
);

export default BulkPage;
export const ErrorBoundary = GeneralErrorBoundary;
