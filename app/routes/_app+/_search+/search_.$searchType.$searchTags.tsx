import { redirect, type LoaderFunctionArgs } from "@remix-run/node";
import { GeneralErrorBoundary } from "~/components/error-boundary";
import { NotFoundError } from "~/lib/errors";
import { page } from "~/web/http.server";
import { isSearchType, resultPath } from "~/lib/search-routes";
import { requireActor } from "~/sessions.server";

/**
 * /search/:searchType/:searchTags (spec 1): the search itself. The spec shows a progress screen here for a fixed 6 s;
 * Koala answers as soon as the results are ready instead (decision 0012): this route sends straight on to the result,
 * and while the result loads in the browser the layout shows the progress screen (search-progress.tsx). Without
 * JavaScript the browser follows the redirect and gets the result page directly.
 */
export const loader = page(async ({ request, params, context }: LoaderFunctionArgs) => {
  await requireActor(request, context);
  if (!isSearchType(params.searchType)) throw new NotFoundError("Page not found");
  throw redirect(resultPath(params.searchType, params.searchTags ?? ""));
});

/** Never shown by itself (the loader always moves on); a page of the app, so a 404 here gets the app's error page. */
export default function Searching() {
  return null;
}

export const ErrorBoundary = GeneralErrorBoundary;
