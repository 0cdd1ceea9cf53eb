import { dayStart } from "./capture";
import { parseId } from "./ids";
import { cleanQuery } from "./keywords-query";
import { tagsOf } from "./smart-tags";

// No zod in this module or its imports: every grid page's script loads it (bench P8a).

/** The review-loop filter of a board's grid: images some link visitor approved, rejected or commented on. */
export const REVIEW_FILTERS = ["approved", "rejected", "commented"] as const;
export type ReviewFilter = (typeof REVIEW_FILTERS)[number];
export const reviewFilterOf = (raw: string | null | undefined): ReviewFilter | undefined =>
  (REVIEW_FILTERS as readonly string[]).includes(raw ?? "") ? (raw as ReviewFilter) : undefined;

/**
 * What narrows a grid, as its URL carries it: the keyword search (`q`, any grid), the smart search (`smart`, the
 * phrase, and `tags`, what it became, comma-separated), attribute values (`f=<attribute id>:<value>`, repeated) and,
 * on a board, the client review filter (`review`); and the capture date's order (`sort=taken`: newest taken first) and
 * range (`takenFrom`, `takenTo`: days, both included). The same filter rides along into
 * the grid's pages, selection, bulk pages and downloads, so "select all" and every bulk action work on exactly the
 * set the person sees.
 */
export interface GridFilter {
  q?: string;
  /** The smart search's phrase, as typed. */
  smart?: string;
  /**
   * The tags the images are found by, ranked by how many each holds: the phrase's tags, as the person edited them.
   * Absent while a phrase has not been turned into tags yet: the page loaders do that (withSmartTags), and every link
   * and API call a page makes carries the tags, so elsewhere (APIs, bulk pages, downloads) a phrase without tags
   * finds nothing. Empty when the person removed every tag.
   */
  tags?: string[];
  /** Chosen values by attribute id (the MIX rule: values of one attribute OR, across attributes AND). */
  attrs?: Record<string, string[]>;
  review?: ReviewFilter;
  /** Newest taken first (images without a capture date last), instead of newest added first. */
  sort?: "taken";
  /** Days ("YYYY-MM-DD"), both included: only images with a capture date in the range. */
  takenFrom?: string;
  takenTo?: string;
}

export const MAX_ATTRIBUTE_VALUES = 50;
const MAX_VALUE_LENGTH = 200;

/** `f` parameters as chosen values by attribute: well-formed ones only (an attribute id that can be one), each value once, at most 50 in all. */
export function attrsOf(raw: string[]): Record<string, string[]> | undefined {
  const attrs: Record<string, string[]> = {};
  let n = 0;
  for (const entry of raw) {
    const m = /^(\d{1,12}):(.+)$/s.exec(entry);
    const id = m && parseId(m[1]);
    if (!m || !id || m[2]!.length > MAX_VALUE_LENGTH || n >= MAX_ATTRIBUTE_VALUES) continue;
    const values = (attrs[String(id)] ??= []);
    if (!values.includes(m[2]!)) {
      values.push(m[2]!);
      n += 1;
    }
  }
  return n ? attrs : undefined;
}

/** A day parameter ("takenFrom", "takenTo") as given, trimmed: "" when absent; `day` only when it is a day. */
function dayParam(params: URLSearchParams, name: "takenFrom" | "takenTo") {
  const given = params.get(name)?.trim() ?? "";
  return { given, day: dayStart(given) === null ? undefined : given };
}

export function gridFilterOf(params: URLSearchParams): GridFilter {
  const q = cleanQuery(params.get("q"));
  const attrs = attrsOf(params.getAll("f"));
  const review = reviewFilterOf(params.get("review"));
  const smart = cleanQuery(params.get("smart")).trim();
  const tags = params.has("tags") ? tagsOf(params.get("tags")) : undefined;
  const takenFrom = dayParam(params, "takenFrom").day;
  const takenTo = dayParam(params, "takenTo").day;
  return {
    ...(q.trim() ? { q } : {}),
    ...(smart ? { smart } : {}),
    ...(tags ? { tags } : {}),
    ...(attrs ? { attrs } : {}),
    ...(review ? { review } : {}),
    ...(params.get("sort") === "taken" ? { sort: "taken" as const } : {}),
    ...(takenFrom ? { takenFrom } : {}),
    ...(takenTo ? { takenTo } : {}),
  };
}

/** What is wrong with a capture date range the URL asks for, by field ("takenFrom", "takenTo"). */
export type TakenRangeProblems = Partial<Record<"takenFrom" | "takenTo", string>>;

/**
 * The capture date range's problems, said beside its fields: a typed day that is not one (a browser without a date
 * picker sends what was typed, "31/12/2024"; the grid leaves such a bound out, so it must say so), and a range that
 * ends before it starts (which finds nothing).
 */
export function takenRangeProblems(params: URLSearchParams): TakenRangeProblems {
  const problems: TakenRangeProblems = {};
  const from = dayParam(params, "takenFrom");
  const to = dayParam(params, "takenTo");
  for (const [name, { given, day }] of [
    ["takenFrom", from],
    ["takenTo", to],
  ] as const) {
    if (!given || day) continue;
    problems[name] = /^\d{4}-\d{2}-\d{2}$/.test(given)
      ? `There is no day ${given}: enter a real day, from 1970-01-01 on. This date was left out.`
      : `"${given.slice(0, 40)}" is not a date: enter it as YYYY-MM-DD, for example 2024-05-31. This date was left out.`;
  }
  const [takenFrom, takenTo] = [from.day, to.day];
  if (takenFrom && takenTo && takenFrom > takenTo)
    problems.takenTo = `The range ends before it starts: "Taken to" (${takenTo}) is before "Taken from" (${takenFrom}), so no image is in it.`;
  return problems;
}

/** The filter's attribute values as `f` parameter values, in a stable order. */
export const attrParams = (attrs: GridFilter["attrs"]) =>
  Object.entries(attrs ?? {})
    .sort(([a], [b]) => Number(a) - Number(b))
    .flatMap(([id, values]) => [...values].sort().map((v) => `${id}:${v}`));

/** The filter as a query string without "?" ("q=…&review=…"), "" when there is none. */
export function filterSearch(filter: GridFilter | undefined): string {
  const params = new URLSearchParams();
  if (filter?.q) params.set("q", filter.q);
  if (filter?.smart) params.set("smart", filter.smart);
  if (filter?.tags) params.set("tags", filter.tags.join(","));
  for (const f of attrParams(filter?.attrs)) params.append("f", f);
  if (filter?.review) params.set("review", filter.review);
  if (filter?.sort) params.set("sort", filter.sort);
  if (filter?.takenFrom) params.set("takenFrom", filter.takenFrom);
  if (filter?.takenTo) params.set("takenTo", filter.takenTo);
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
