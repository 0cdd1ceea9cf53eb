import { cleanQuery } from "./keywords-query";

/** The search types of the spec's routes that exist (smart search comes with its own issue). */
export const SEARCH_TYPES = ["keyword"] as const;
export type SearchType = (typeof SEARCH_TYPES)[number];
export const isSearchType = (raw: string | undefined): raw is SearchType => (SEARCH_TYPES as readonly string[]).includes(raw ?? "");

/** /search/keyword/cola%20aisle: the spec's search route (progress), which moves on to the result. */
export const searchPath = (type: SearchType, tags: string) => `/search/${type}/${encodeURIComponent(cleanQuery(tags).trim())}`;
/** /result/keyword/cola%20aisle: the spec's result screen. */
export const resultPath = (type: SearchType, tags: string) => `/result/${type}/${encodeURIComponent(cleanQuery(tags).trim())}`;
