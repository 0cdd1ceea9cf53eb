import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { BulkPage } from "~/components/bulk-page";
import { GeneralErrorBoundary } from "~/components/error-boundary";
import { bulkPageAction, bulkPageData } from "~/routes/_app+/_bulk+/bulk-page.server";
import { page } from "~/web/http.server";
import { boardScopeOf } from "~/web/scopes.server";

export const meta: MetaFunction = () => [{ title: "Bulk action | Koala" }];

/** A bulk action on a board's selection: /:clientID/board/:boardID/bulk/:op (download, move, copy, keywords, remove, data). */
export const loader = page(async ({ request, params, context }: LoaderFunctionArgs) =>
  bulkPageData(request, await boardScopeOf({ request, context }, params, { filtered: true }), params.op),
);

export const action = page(async ({ request, params, context }: ActionFunctionArgs) =>
  bulkPageAction(request, await boardScopeOf({ request, context }, params, { filtered: true }), params.op),
);

export default BulkPage;
export const ErrorBoundary = GeneralErrorBoundary;
