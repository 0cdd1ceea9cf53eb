import { dialect } from "~/db/connection.server";
import type { Term } from "~/lib/keywords-query";
import { parseId } from "~/lib/ids";
import { hasSmart } from "~/lib/smart-tags";
import { scopeKey, scopeVersion, type GridScope } from "./scope.server";
import { prefixWords, strongMatchesAtLeast, tagTermsOf, termsOf } from "./search.server";

/**
 * A grid's search as a plan: what a scope and its filter (keyword terms, smart tags, attribute values, a board's
 * review filter) ask of the database, decided once, before any SQL is built. The grid's builder (grid.server.ts)
 * consumes it: `searchPlan(scope)` says which rows drive the statement and how they sort, for the page, the count,
 * the jumps and every selection; `pagePlan` says, for one page, whether it is read from that statement or walked
 * along the project's keyset index (a common word). Decision 0022.
 */

/**
 * Where a card sorts, highest first: its rank (none without a search), then its time (a project by the image's
 * creation, a board by when the image was added; either by its capture time when the filter asks, `sort=taken`:
 * unknown is 0, so last), then its id. A keyword search ranks images whose title or keywords
 * hold every term first (`strong`: 1, else 0); a smart search by how many of its tags an image holds (`tags`);
 * both together by the tags, then the keyword tier (`tags+strong`: 2 × tags + strong, one integer, since strong is 0
 * or 1).
 */
export type Rank = "strong" | "tags" | "tags+strong";
export interface SortKey {
  rank: Rank | null;
  time: "images.created_at" | "board_images.added_at" | "images.taken_at";
  id: "images.id" | "board_images.image_id";
}

/**
 * Which rows the grid's statement starts from:
 * - `keyset`: the scope's own keyset index (a project's `images_project_keyset`, a board's `board_images_keyset`);
 *   a board's search keeps it (the board is the smaller side) and joins its matches;
 * - `keywords`: a project's (or every project's) keyword matches (FTS5 / tsvector, derived table `m`, with their
 *   tier `strong`), each image then found by its id: `from m cross join images` (SQLite keeps a CROSS JOIN's order);
 * - `tags`: the same for a smart search's tag matches (`s`, with `n`, the tags each image holds).
 * A page may instead be walked (`walk`, see pagePlan).
 */
export type Driver = { kind: "keyset"; over: "images" | "board_images" } | { kind: "keywords" } | { kind: "tags" };

export interface SearchPlan {
  driver: Driver;
  sortKey: SortKey;
  /** The keyword terms, joined as `m` (the driver's, or a board's filter); where they are looked for. */
  keywords: { terms: Term[]; in: "anywhere" | "noFileName" } | null;
  /** The smart search's tags as phrase terms, joined as `s`. */
  tags: Term[] | null;
  /**
   * Nothing is found whatever the data: across projects only a search makes a grid (text without a word finds
   * nothing there; in one project it filters nothing), and a smart search whose tags were all removed (or that found
   * none) finds nothing either, rather than everything.
   */
  empty: boolean;
  /** A project's keyword search (no smart search): its forward pages are walked when the word is common (pagePlan). */
  walkable: boolean;
}

export function searchPlan(scope: GridScope): SearchPlan {
  const terms = termsOf(scope.filter?.q);
  const tags = tagTermsOf(scope.filter?.tags);
  const smart = hasSmart(scope.filter);
  const onBoard = scope.kind === "board" || scope.kind === "shared";
  const keywords = terms.length
    ? { terms, in: scope.kind === "shared" && !scope.link.allowDownload ? ("noFileName" as const) : ("anywhere" as const) }
    : null;
  const tagged = tags.length ? tags : null;
  const driver: Driver = onBoard
    ? { kind: "keyset", over: "board_images" }
    : keywords
      ? { kind: "keywords" }
      : tagged
        ? { kind: "tags" }
        : { kind: "keyset", over: "images" };
  return {
    driver,
    sortKey: {
      rank: keywords && tagged ? "tags+strong" : keywords ? "strong" : tagged ? "tags" : null,
      time: scope.filter?.sort === "taken" ? "images.taken_at" : onBoard ? "board_images.added_at" : "images.created_at",
      id: onBoard ? "board_images.image_id" : "images.id",
    },
    keywords,
    tags: tagged,
    empty: (scope.kind === "all" && !keywords && !tagged) || (smart && !tagged),
    // A walk goes along the project's keyset index, which is in creation order.
    walkable: scope.kind === "project" && !smart && keywords !== null && scope.filter?.sort !== "taken",
  };
}

/**
 * A position in the sort key: a page starts after (or ends before) it. `rank` is 0 without a search. The row-value
 * comparison `(rank, t, id) < (…)` is the keyset: it costs the same at any depth (without a rank, `(t, id)` seeks the
 * scope's keyset index).
 */
export interface Cursor {
  rank: number;
  t: number;
  id: number;
}

/**
 * Cursors are opaque in URLs and JSON: base64url of `t.id`, with `rank:` before it when the rank is not 0 (so a
 * grid without a search has the cursors it always had). Anything else (a third number, a rank past two digits, an id
 * past 32 bits) is no cursor: the page then starts from the beginning, as for a missing one.
 */
export const encodeCursor = (c: Cursor) => Buffer.from(`${c.rank ? `${c.rank}:` : ""}${c.t}.${c.id}`).toString("base64url");
export function decodeCursor(value: string | null | undefined): Cursor | null {
  if (!value || value.length > 64) return null;
  const m = /^(?:(\d{1,2}):)?(\d{1,16})\.(\d{1,12})$/.exec(Buffer.from(value, "base64url").toString("latin1"));
  const id = m && parseId(m[3]);
  return m && id ? { rank: Number(m[1] ?? 0), t: Number(m[2]), id } : null;
}

/**
 * How many title or keyword matches (in any project) make a word common enough to walk, and (SQLite) to walk in
 * windows of the project's newest images; settings so tests can take every path.
 */
export const walkSettings = { from: 2000, windowFrom: 20_000, window: 4000 };

/**
 * A walked page (a common word in a project's keyword search): along the project's keyset index, newest first, in
 * the ranking's two tiers (`strong`: every term in the title or keywords, then `rest`), each image checked against
 * the word's matches and the attribute values, until the page is full: a word in 10% of a 1M project costs 14 ms a
 * page instead of 337 ms (bench P5-1m). A rare word is not walked (a walk would read the whole index to find it).
 * `from`: the tier the page starts in (the cursor's). `windows` (SQLite): a very common word's first tier goes through windows
 * of the project's newest images (`first` of them, then sized by the hits), each with only the matches among the ids
 * it spans and the last word's prefix spelled out as the words the index holds (`spelledOut`, SQLite), instead of
 * reading every match into a list first (P5-1m's loader p99 21 → 2.3 ms; decision 0012).
 */
export interface WalkDriver {
  kind: "walk";
  terms: Term[];
  from: "strong" | "rest";
  windows: { first: number; spelledOut: Term[][] | null } | null;
}

/** How one page is read: the plan's statement (its driver, sorted by the sort key), or walked. */
export type PageDriver = Driver | WalkDriver;

/**
 * The driver of one page: walked for a forward page of a common word, otherwise the plan's (pages backwards are
 * always read from the plan's statement).
 */
export async function pagePlan(
  scope: GridScope,
  plan: SearchPlan,
  at: { after?: Cursor | null; before?: Cursor | null },
): Promise<PageDriver> {
  if (!plan.walkable || scope.kind !== "project" || at.before || !plan.keywords) return plan.driver;
  const { terms } = plan.keywords;
  if (!(await strongMatchesAtLeast(terms, walkSettings.from))) return plan.driver;
  const from = at.after && at.after.rank === 0 ? "rest" : "strong";
  // A word of 10,000 matches (the 100k project's) would gain 0.6 ms a page from windows and pay it in two more
  // statements, so windows start at 20,000 (decision 0012). Only on SQLite: PostgreSQL checks each image by its own
  // row (keywordCheck), reads no list of matches, and a window would only add its two statements.
  const windowed = from === "strong" && dialect() === "sqlite" && (await strongMatchesAtLeast(terms, walkSettings.windowFrom));
  return {
    kind: "walk",
    terms,
    from,
    windows: windowed
      ? { first: walkSettings.window, spelledOut: await prefixWords(terms, `${scopeKey(scope)}@${scopeVersion(scope)}`) }
      : null,
  };
}
