import { cleanQuery } from "./keywords-query";
import { reviewFilterOf, type ReviewFilter } from "./schemas";

/**
 * What narrows a grid, as its URL carries it: the keyword search (`q`, any grid) and, on a board, the client
 * review filter (`review`). The same filter rides along into the grid's pages, selection, bulk pages and downloads,
 * so "select all" and every bulk action work on exactly the set the person sees.
 */
export interface GridFilter {
  q?: string;
  review?: ReviewFilter;
}

export function gridFilterOf(params: URLSearchParams): GridFilter {
  const q = cleanQuery(params.get("q"));
  const review = reviewFilterOf(params.get("review"));
  return { ...(q.trim() ? { q } : {}), ...(review ? { review } : {}) };
}

/** The filter as a query string without "?" ("q=…&review=…"), "" when there is none. */
export function filterSearch(filter: GridFilter | undefined): string {
  const params = new URLSearchParams();
  if (filter?.q) params.set("q", filter.q);
  if (filter?.review) params.set("review", filter.review);
  return params.toString();
}

/** `path` with the filter's query appended. */
export function withFilterQuery(path: string, filter: GridFilter | undefined): string {
  const search = filterSearch(filter);
  return search ? `${path}${path.includes("?") ? "&" : "?"}${search}` : path;
}

/** A grid's API parameters (`project=1`, `board=abc`) with its filter: for /api/grid and /api/selection. */
export function apiParams(base: string, filter: GridFilter | undefined): string {
  const search = filterSearch(filter);
  return search ? `${base}&${search}` : base;
}
