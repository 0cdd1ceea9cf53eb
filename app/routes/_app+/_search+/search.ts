import { redirect, type LoaderFunctionArgs } from "@remix-run/node";
import { cleanQuery } from "~/lib/keywords-query";
import { searchPath } from "~/lib/search-routes";

/**
 * GET /search?q=…&type=keyword|smart: where the header's search box posts without JavaScript (a form cannot put its
 * field in the path). Sends on to the spec's route /search/:searchType/:searchTags; an empty search goes back to the
 * dashboard.
 */
export function loader({ request }: LoaderFunctionArgs) {
  const params = new URL(request.url).searchParams;
  const q = cleanQuery(params.get("q")).trim();
  return redirect(q ? searchPath(params.get("type") === "smart" ? "smart" : "keyword", q) : "/dashboard");
}
