import { redirect, type LoaderFunctionArgs } from "@remix-run/node";
import { cleanQuery } from "~/lib/keywords-query";
import { searchPath } from "~/lib/search-routes";

/**
 * GET /search?q=…: where the header's search box posts without JavaScript (a form cannot put its field in the path).
 * Sends on to the spec's route /search/keyword/:searchTags; an empty search goes back to the dashboard.
 */
export function loader({ request }: LoaderFunctionArgs) {
  const q = cleanQuery(new URL(request.url).searchParams.get("q")).trim();
  return redirect(q ? searchPath("keyword", q) : "/dashboard");
}
