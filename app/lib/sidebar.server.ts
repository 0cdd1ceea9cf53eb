import { attributeFacets } from "~/models/facets.server";
import type { OneProjectScope } from "~/models/scope.server";

/**
 * What a grid page's search sidebar shows: the scope's filter as the URL gave it, the attribute filters with their
 * counts (null where they are not offered), and what each long list's 'start typing...' box holds.
 */
export async function sidebarData(request: Request, scope: OneProjectScope, opts: { attributes: boolean } = { attributes: true }) {
  const params = new URL(request.url).searchParams;
  const narrow: Record<string, string> = {};
  for (const [name, value] of params) if (/^v\d{1,12}$/.test(name) && value.trim()) narrow[name.slice(1)] = value.slice(0, 100);
  return {
    filter: scope.filter ?? {},
    facets: opts.attributes ? await attributeFacets(scope) : null,
    narrow,
  };
}
