import { cleanQuery } from "./keywords-query";

/** The search types of the spec's routes: keyword (words) and smart (a phrase that becomes tags). */
export const SEARCH_TYPES = ["keyword", "smart"] as const;
export type SearchType = (typeof SEARCH_TYPES)[number];
export const isSearchType = (raw: string | undefined): raw is SearchType => (SEARCH_TYPES as readonly string[]).includes(raw ?? "");

/** The words as a path segment; dots too, so "." or ".." stays a search and is not read as a path step. */
const segment = (tags: string) => encodeURIComponent(cleanQuery(tags).trim()).replace(/\./g, "%2E");
/** /search/keyword/cola%20aisle: the spec's search route (progress), which moves on to the result. */
export const searchPath = (type: SearchType, tags: string) => `/search/${type}/${segment(tags)}`;
/** /result/keyword/cola%20aisle: the spec's result screen. */
export const resultPath = (type: SearchType, tags: string) => `/result/${type}/${segment(tags)}`;
