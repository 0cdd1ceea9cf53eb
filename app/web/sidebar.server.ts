import { takenRangeProblems } from "~/lib/grid-filter";
import { attributeFacets, facetsFingerprint } from "~/models/facets.server";
import type { OneProjectScope } from "~/models/scope.server";
import { smartPanel } from "~/services/smart-search.server";

/**
 * What a grid page's search sidebar shows: the scope's filter as the URL gave it, the smart search's panel (null on
 * a shared board, which offers keyword and attribute search only; and null where there is no smart search in the
 * URL), whether the capture date's order and range are offered (not on a shared board either) and what is wrong with
 * the range asked for, the attribute filters with their counts (null where they are not offered), and what each long
 * list's 'start typing...' box holds.
 */
export async function sidebarData(request: Request, scope: OneProjectScope, opts: { attributes: boolean } = { attributes: true }) {
  const params = new URL(request.url).searchParams;
  const narrow: Record<string, string> = {};
  for (const [name, value] of params) if (/^v\d{1,12}$/.test(name) && value.trim()) narrow[name.slice(1)] = value.slice(0, 100);
  const [facets, smart] = await Promise.all([
    opts.attributes ? attributeFacets(scope) : null,
    scope.kind === "shared" ? null : smartPanel(scope),
  ]);
  return {
    filter: scope.filter ?? {},
    smartOffered: scope.kind !== "shared",
    captureOffered: scope.kind !== "shared",
    captureProblems: scope.kind === "shared" ? {} : takenRangeProblems(params),
    smart,
    facets,
    /** The values one can choose (the lists do not depend on the filter): 'New Filters Loaded' compares it. */
    filtersVersion: facetsFingerprint(facets),
    narrow,
  };
}
