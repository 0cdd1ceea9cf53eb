import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { BulkPage } from "~/components/bulk-page";
import { GeneralErrorBoundary } from "~/components/error-boundary";
import { bulkPageAction, bulkPageData } from "~/routes/_app+/_bulk+/bulk-page.server";
import { page } from "~/web/http.server";
import { projectScopeOf } from "~/web/scopes.server";

export const meta: MetaFunction = () => [{ title: "Bulk action | Koala" }];

/** A bulk action on a project's selection: /client/:id/bulk/:op (download, add, keywords, delete, data). */
export const loader = page(async ({ request, params, context }: LoaderFunctionArgs) =>
  bulkPageData(request, await projectScopeOf({ request, context }, params.id, { filtered: true }), params.op),
);

export const action = page(async ({ request, params, context }: ActionFunctionArgs) =>
  bulkPageAction(request, await projectScopeOf({ request, context }, params.id, { filtered: true }), params.op),
);

export default BulkPage;
export const ErrorBoundary = GeneralErrorBoundary;
