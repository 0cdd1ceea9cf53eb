import { remember } from "~/lib/bounded-cache";
import { dayStart } from "~/lib/capture";
import { MAX_ID, possibleIds } from "~/lib/ids";
import { firstStrings } from "~/lib/json-strings";
import { sql, type RawBuilder, type SelectQueryBuilder } from "kysely";
import { db, dialect } from "~/db/connection.server";
import { StatementCache } from "~/db/statements.server";
import type { Database } from "~/db/schema";
import type { Term } from "~/lib/keywords-query";
import { scopeKey, scopeVersion, visibleProjectIds, type AllProjectsScope, type GridScope, type ProjectScope } from "./scope.server";
import { keywordCheck, keywordMatches, tagMatches, type IdWindow, type KeywordMatch, type TagMatch } from "./search.server";
import {
  decodeCursor,
  encodeCursor,
  pagePlan,
  searchPlan,
  walkSettings,
  type Cursor,
  type SearchPlan,
  type SortKey,
  type WalkDriver,
} from "./search-plan.server";

export type { GridScope, Cursor };
export { decodeCursor, encodeCursor, walkSettings };

/**
 * The image grid of a resolved scope (a project, a board, a shared board, every project of a search), paged by
 * keyset. What its search asks (which rows drive the statement, how they sort) is decided by the scope's plan
 * (`searchPlan`, search-plan.server.ts); this module builds and runs the statements the plan describes. A page costs
 * the same at any depth: it seeks from the cursor, never skips rows. Access was settled when the scope was resolved
 * (scope.server.ts); nothing here checks membership again.
 */
export interface GridCard {
  id: number;
  title: string;
  keywords: string[];
  thumbKey: string;
}

export interface GridPage {
  cards: GridCard[];
  /** Cursor of the last card, when more follow. */
  next: string | null;
  /** Cursor of the first card, when cards precede it. */
  prev: string | null;
}

export const MAX_PAGE = 300;

/**
 * The tables a grid's statement names: the schema's, and the full-text matches joined as derived tables (`m`, a
 * keyword search's; `s`, a smart search's).
 */
type GridTables = Database & { m: KeywordMatch; s: TagMatch };
/**
 * A grid's statement: rows of `images` (a board's joined to its `board_images`, a search's to its matches), selecting
 * `O`. Every statement of a scope (page, count, jump, selection) starts from the same one (scopeQuery).
 */
export type ImagesQuery<O = object> = SelectQueryBuilder<GridTables, "images", O>;

/** A card's columns and its place in the sort key (`rank` when the plan ranks). */
interface GridRow {
  id: number;
  title: string;
  keywords: string;
  thumb_key: string;
  rank?: number;
  t: number;
}

/** What a card shows of its image. */
const CARD_COLUMNS = ["images.id", "images.title", "images.keywords", "images.thumb_key"] as const;

/** A sort key's expressions over the statement's tables. */
function keyOf(sortKey: SortKey) {
  const rank =
    sortKey.rank === "strong"
      ? sql.ref<number>("m.strong")
      : sortKey.rank === "tags"
        ? sql.ref<number>("s.n")
        : sortKey.rank === "tags+strong"
          ? sql<number>`(${sql.ref("s.n")} * 2 + ${sql.ref("m.strong")})`
          : null;
  return { rank, t: sql.ref<number>(sortKey.time), id: sql.ref<number>(sortKey.id) };
}
type Key = ReturnType<typeof keyOf>;

/**
 * Row-value comparison with a cursor, `(rank, t, id) < (…)` (or `>`): both dialects seek the (t, id) keyset index
 * directly when there is no rank, at any depth.
 */
const beyond = (key: Key, op: "<" | ">", c: Cursor): RawBuilder<boolean> =>
  key.rank
    ? sql<boolean>`(${key.rank}, ${key.t}, ${key.id}) ${sql.raw(op)} (${c.rank}, ${c.t}, ${c.id})`
    : sql<boolean>`(${key.t}, ${key.id}) ${sql.raw(op)} (${c.t}, ${c.id})`;

/**
 * One tier of a walked page (see walkedRows): the images holding every term in the title or keywords (`strong`), or
 * the others that match (`rest`); `window`: within a range of ids (and the prefix spelled out).
 */
interface Walk {
  tier: "strong" | "rest";
  terms: Term[];
  window?: IdWindow;
}

/**
 * The statement of a scope, as its plan says: the driver's rows (the scope's keyset index; or the matches, each image
 * then found by its id; or, walking, the project's images), narrowed by the scope and the filter. Selects nothing: each
 * use selects what it needs.
 */
function scopeQuery(scope: GridScope, plan: SearchPlan = searchPlan(scope), walk?: Walk): ImagesQuery {
  const tables = db().withTables<{ m: KeywordMatch; s: TagMatch }>();
  // Matches that drive are read whole (and a smart search's tags beside a keyword search's with them); on a keyset
  // driver (a board's) they narrow its rows.
  const join = plan.driver.kind === "keyset" ? "narrowing" : "driving";
  const m = plan.keywords && !walk ? keywordMatches(plan.keywords.terms, plan.keywords.in, join).as("m") : null;
  const s = plan.tags ? tagMatches(plan.tags, join).as("s") : null;
  let q: ImagesQuery;
  if (scope.kind === "board" || scope.kind === "shared") {
    // A board's search starts from the board, the smaller side.
    let onBoard = tables.selectFrom("board_images").innerJoin("images", "images.id", "board_images.image_id");
    if (m) onBoard = onBoard.innerJoin(m, "m.id", "images.id");
    if (s) onBoard = onBoard.innerJoin(s, "s.id", "images.id");
    q = onBoard.where("board_images.board_id", "=", scope.board.id);
  } else {
    // A search goes from its matches to their images: SQLite otherwise read the project's whole index and looked each
    // image up among the matches, so the rarer the word the slower its page (a word in 1 image of 100k: 6.4 ms instead
    // of 0.03 ms; in 800: 9 ms instead of 2 ms; a smart search's five tags: 22 ms instead of 9 ms). SQLite keeps a
    // CROSS JOIN's order; PostgreSQL plans it as any inner join. Common words are walked instead (walkedRows).
    const driver = walk ? "walk" : plan.driver.kind;
    if (driver === "keywords" && m) {
      q = tables.selectFrom(m).crossJoin("images").whereRef("images.id", "=", "m.id");
      if (s) q = q.innerJoin(s, "s.id", "images.id");
    } else if (driver === "tags" && s) q = tables.selectFrom(s).crossJoin("images").whereRef("images.id", "=", "s.id");
    else q = tables.selectFrom("images");
    q =
      scope.kind === "project"
        ? q.where("images.project_id", "=", scope.project.id)
        : q.where("images.project_id", "in", visibleProjectIds(scope.actor));
  }
  if (walk) q = q.where(keywordCheck(walk.terms, walk.tier, walk.window));
  if (plan.empty) q = q.where(sql<boolean>`1 = 0`);
  const takenFrom = scope.filter?.takenFrom ? dayStart(scope.filter.takenFrom) : null;
  const takenTo = scope.filter?.takenTo ? dayStart(scope.filter.takenTo, true) : null;
  // A range keeps only images with a capture date (0, unknown, is before any day).
  if (takenFrom !== null || takenTo !== null) q = q.where("images.taken_at", ">=", Math.max(takenFrom ?? 1, 1));
  if (takenTo !== null) q = q.where("images.taken_at", "<", takenTo);
  // The MIX rule: the chosen values of one attribute OR, attributes AND.
  for (const [attributeId, values] of Object.entries(scope.filter?.attrs ?? {}))
    q = q.where((eb) => {
      const holding = eb
        .selectFrom("image_attribute_values as av")
        .innerJoin("attributes as a", "a.id", "av.attribute_id")
        .select("av.image_id")
        .where("av.attribute_id", "=", Number(attributeId))
        .where("a.active", "=", 1) // a deactivated attribute (hidden everywhere) matches nothing: its values cannot be probed
        .where("av.value", "in", values);
      // A walk checks image by image (one primary-key look-up each; on PostgreSQL behind `offset 0`, as keywordCheck
      // says why); otherwise the value's images are read once.
      if (!walk) return eb("images.id", "in", holding);
      const own = holding.whereRef("av.image_id", "=", "images.id");
      return eb.exists(dialect() === "postgres" ? own.modifyEnd(sql`offset 0`) : own);
    });
  const review = scope.kind === "board" ? scope.filter?.review : undefined;
  if (review && scope.kind === "board")
    q = q.where((eb) =>
      eb.exists(
        eb
          .selectFrom("share_reviews as r")
          .innerJoin("share_links as l", "l.id", "r.link_id")
          .select("r.id")
          .whereRef("r.image_id", "=", "images.id")
          .where("l.board_id", "=", scope.board.id)
          .where((inner) => (review === "commented" ? inner("r.comment", "is not", null) : inner("r.mark", "=", review))),
      ),
    );
  return q;
}

/** A selection of a grid: every image of the scope except `ids`, or just `ids`. */
export interface Picked {
  all: boolean;
  ids: number[];
}

/**
 * The ids of the scope's images a selection holds, as a subquery (column `id`): what every bulk action works on,
 * set-based, whatever its size.
 */
export function selectedImageIds(scope: GridScope, picked: Picked): ImagesQuery<{ id: number }> {
  return pickedImages(scope, picked).select(sql.ref<number>("images.id").as("id"));
}

/** The scope's statement (images, joined and filtered as its grid is) narrowed to a selection; select what you need. */
export function pickedImages(scope: GridScope, picked: Picked): ImagesQuery {
  const q = scopeQuery(scope);
  if (picked.all) return picked.ids.length ? q.where("images.id", "not in", picked.ids) : q;
  return q.where("images.id", "in", picked.ids.length ? picked.ids : [-1]);
}

/**
 * A page of the plan's statement: its keys (`id`, the sort key) sorted first, and its cards' columns read after, for
 * its rows only: a search sorts every match, and sorting whole rows (title, keywords) cost twice as much (a smart
 * search's tag in 13,000 images of the 100k project: 74 → 35 ms for the bare statement). After a cursor (newest
 * first), before one (oldest first: the caller reverses), or from the start; `limit` rows.
 */
export function sortedPage(scope: GridScope, plan: SearchPlan, at: { after?: Cursor | null; before?: Cursor | null }, limit: number) {
  const key = keyOf(plan.sortKey);
  const backwards = Boolean(at.before);
  const cursor = at.before ?? at.after;
  const direction = backwards ? "asc" : "desc";
  const rank = key.rank;
  let q = scopeQuery(scope, plan);
  if (cursor) q = q.where(beyond(key, backwards ? ">" : "<", cursor));
  const keys = q
    .select([sql.ref<number>("images.id").as("id"), key.t.as("t")])
    .$if(rank !== null, (k) => k.select(rank!.as("rank")).orderBy(rank!, direction))
    .orderBy(key.t, direction)
    .orderBy(key.id, direction)
    .limit(limit)
    .as("k");
  return db()
    .selectFrom(keys)
    .crossJoin("images")
    .whereRef("images.id", "=", "k.id")
    .select([...CARD_COLUMNS, "k.t"])
    .$if(rank !== null, (p) => p.select("k.rank").orderBy("k.rank", direction))
    .orderBy("k.t", direction)
    .orderBy("k.id", direction);
}

/** The page statements of scopes without a search or filter: most pages, built once per shape (statements.server.ts). */
const plainPages = new StatementCache();

/**
 * A page of sortedPage's statement. A project's or a board's page with no search or filter other than its order runs
 * a statement built once for its shape (which scope, which order, which side of a cursor) with this page's values;
 * any other page builds its own.
 */
async function sortedRows(scope: GridScope, plan: SearchPlan, at: { after?: Cursor | null; before?: Cursor | null }, limit: number) {
  const unfiltered = Object.entries(scope.filter ?? {}).every(([name, value]) => name === "sort" || value === undefined || value === "");
  if (scope.kind === "all" || !unfiltered || plan.keywords || plan.tags || plan.empty || plan.sortKey.rank)
    return sortedPage(scope, plan, at, limit).execute();
  const cursor = at.before ?? at.after ?? null;
  const side = at.before ? "before" : at.after ? "after" : "first";
  const owner = scope.kind === "project" ? scope.project.id : scope.board.id;
  const shape = `${scope.kind === "project" ? "project" : "board"}|${plan.sortKey.time}|${side}`;
  /**
   * The scope and cursor with slots for their values. The scope holds nothing else the statement could read (no
   * actor, no other ids, only the order of the filter): a later change to scopeQuery that read more would fail here
   * rather than keep the first caller's value in a statement every caller runs.
   */
  const order = scope.filter?.sort ? { sort: scope.filter.sort } : {};
  const slotted = (id: number | string, t?: number, imageId?: number) => ({
    scope: (scope.kind === "project"
      ? { kind: scope.kind, project: { id }, filter: order }
      : { kind: scope.kind, board: { id }, filter: order }) as unknown as GridScope,
    cursor: t === undefined || imageId === undefined ? null : { rank: 0, t, id: imageId },
  });
  if (!cursor)
    return plainPages.rows(shape, [owner, limit] as [number | string, number], (_d, id, n) =>
      sortedPage(slotted(id).scope, plan, {}, n),
    ) as Promise<GridRow[]>;
  return plainPages.rows(
    shape,
    [owner, limit, cursor.t, cursor.id] as [number | string, number, number, number],
    (_d, id, n, t, imageId) => {
      const s = slotted(id, t, imageId);
      return sortedPage(s.scope, plan, at.before ? { before: s.cursor } : { after: s.cursor }, n);
    },
  ) as Promise<GridRow[]>;
}

/** An image's place in a project's keyset index (its creation, id) against a cursor's, as the index compares them. */
const byCreation = (op: "<" | ">=", c: Pick<Cursor, "t" | "id">) =>
  sql<boolean>`(${sql.ref("images.created_at")}, ${sql.ref("images.id")}) ${sql.raw(op)} (${c.t}, ${c.id})`;

/**
 * One tier of a walked page: the project's images along its keyset index, newest first, after `from` (and not past a
 * window's edge), each checked against the tier's matches and the attribute values. Ordered by the index's own
 * columns (an expression would sort every match); the cursor in the same terms.
 */
export function walkStatement(scope: ProjectScope, plan: SearchPlan, walk: Walk & { from: Cursor | null; edge?: Cursor }) {
  let q = scopeQuery(scope, plan, walk);
  if (walk.from) q = q.where(byCreation("<", walk.from));
  if (walk.edge) q = q.where(byCreation(">=", walk.edge));
  return q
    .select([...CARD_COLUMNS, sql.ref<number>("images.created_at").as("t")])
    .orderBy(sql.ref("images.created_at"), "desc")
    .orderBy(sql.ref("images.id"), "desc");
}

/**
 * A walked page (pagePlan decides when): the ranking's two tiers in turn, title or keyword matches (rank 1), then the
 * rest (rank 0), until `n` rows; `strong`: how many of the rows, from the first, are of the first tier.
 *
 * The rows are not marked with their rank: a spread copy of each cost the search's p99 a third (bench P5: 3.0 → 4.1
 * ms), and a property added in place grew each row's storage, 46 KB of the page's 200 KB of garbage per call (a
 * young-generation collection every 65 pages instead of every 85).
 */
async function walkedRows(
  scope: ProjectScope,
  plan: SearchPlan,
  walk: WalkDriver,
  after: Cursor | null,
  n: number,
): Promise<{ rows: GridRow[]; strong: number }> {
  const { terms } = walk;
  const tier = async (name: Walk["tier"], from: Cursor | null, count: number, window?: Window): Promise<GridRow[]> =>
    walkStatement(scope, plan, { tier: name, terms, window, from, edge: window?.edge }).limit(count).execute();
  /**
   * The first tier of a very common word on SQLite: the walk checks each image against the word's matches, which
   * SQLite first reads into a list, all of them (100,000 for a word in 10% of a 1M project, 13 ms of the page's 14).
   * So the walk goes through windows of the project's newest images, each with only the matches among the ids it
   * spans (FTS5 seeks the id range in its index) and the last word's prefix spelled out (FTS5 would merge the
   * prefix's lists whole first). When a window does not fill the page (the word may be rarer in this project than
   * its count says, or the attribute values narrow it), the next is sized by the hits the last one gave; past 16
   * first windows, or near the project's end, the walk goes on unwindowed.
   */
  const strongTier = async (from: Cursor | null, count: number) => {
    if (!walk.windows) return tier("strong", from, count);
    const rows: GridRow[] = [];
    let cursor = from;
    let size = walk.windows.first;
    while (size <= walk.windows.first * 16) {
      const window = await newestWindow(scope.project.id, cursor, size);
      if (!window) break;
      const found = await tier("strong", cursor, count - rows.length, { ...window, spelledOut: walk.windows.spelledOut });
      rows.push(...found);
      if (rows.length >= count) return rows;
      cursor = window.edge;
      // The next window as large as this one's hits say the rest of the page needs, half again for luck.
      size = Math.ceil(((size * (count - rows.length)) / Math.max(found.length, 1)) * 1.5);
    }
    return [...rows, ...(await tier("strong", cursor, count - rows.length))];
  };
  if (walk.from === "rest") return { rows: await tier("rest", after, n), strong: 0 };
  const strong = await strongTier(after, n);
  if (strong.length >= n) return { rows: strong, strong: strong.length };
  return { rows: [...strong, ...(await tier("rest", null, n - strong.length))], strong: strong.length };
}

/**
 * A window of a project's live images: the `size` newest after a cursor, as the last of them (`edge`, in created_at
 * terms) and the range of ids they span. Null when fewer remain (the walk then needs no window). Index-only reads.
 */
interface Window extends IdWindow {
  edge: Cursor;
}
async function newestWindow(projectId: number, from: Cursor | null, size: number): Promise<Window | null> {
  const live = () => {
    const q = db().selectFrom("images").where("images.project_id", "=", projectId);
    return from ? q.where(byCreation("<", from)) : q;
  };
  const last = await live()
    .select(["images.created_at as t", "images.id as id"])
    .orderBy("images.created_at", "desc")
    .orderBy("images.id", "desc")
    .limit(1)
    .offset(size - 1)
    .executeTakeFirst();
  if (!last) return null;
  const edge = { rank: 1, t: Number(last.t), id: Number(last.id) };
  // The lowest and highest id of the rows from the edge up (an image added since the statement above is among them:
  // the range never leaves the edge out). Asked as a plain `min(id) … where (created_at, id) >= edge`, PostgreSQL
  // answered min() from the primary key, walking up the ids until one passed the filter: the whole project below the
  // window (368 ms on the 1M project, where ids grow with time; docs/perf/postgres.md). A subquery with a LIMIT is
  // one neither database folds into min(): it reads the keyset index from the top down to the edge.
  const range = await db()
    .selectFrom(
      live()
        .where(byCreation(">=", edge))
        .select("images.id")
        .orderBy("images.created_at", "desc")
        .orderBy("images.id", "desc")
        .limit(MAX_ID)
        .as("w"),
    )
    .select((eb) => [eb.fn.min("w.id").as("lo"), eb.fn.max("w.id").as("hi")])
    .executeTakeFirstOrThrow();
  return { edge, ids: { lo: Number(range.lo), hi: Number(range.hi) } };
}

/**
 * One page: after a cursor (the next page), before one (the previous page), or from the start.
 */
export async function gridPage(
  scope: GridScope,
  opts: { after?: Cursor | null; before?: Cursor | null; limit?: number; fullKeywords?: boolean } = {},
): Promise<GridPage> {
  const limit = Math.min(Math.max(opts.limit ?? 60, 1), MAX_PAGE);
  const plan = searchPlan(scope);
  const driver = await pagePlan(scope, plan, opts);
  // A walked page (forward only, never reversed) knows its rows' ranks by their place; a sorted one selects them.
  const walked =
    driver.kind === "walk" && scope.kind === "project" ? await walkedRows(scope, plan, driver, opts.after ?? null, limit + 1) : null;
  const rows: GridRow[] = walked ? walked.rows : await sortedRows(scope, plan, opts, limit + 1);
  const rankAt = (i: number) => (walked ? (i < walked.strong ? 1 : 0) : Number(rows[i]?.rank ?? 0));
  const backwards = Boolean(opts.before);
  const more = rows.length > limit;
  const page = rows.slice(0, limit);
  if (backwards) page.reverse();
  // A card shows five keywords; the API's list gives them all.
  const keywordsOf = (r: GridRow) => firstStrings(r.keywords, opts.fullKeywords ? Infinity : 5);
  const cards = page.map((r) => ({
    id: r.id,
    title: r.title,
    keywords: keywordsOf(r),
    thumbKey: r.thumb_key,
  }));
  // The cursor of the page's i-th card, found at its place in `rows` (a backward page was reversed).
  const cursorAt = (i: number) => {
    const j = backwards ? page.length - 1 - i : i;
    return encodeCursor({ rank: rankAt(j), t: Number(rows[j]!.t), id: Number(rows[j]!.id) });
  };
  const first = page[0];
  const last = page[page.length - 1];
  return {
    cards,
    next: last && (backwards || more) ? cursorAt(page.length - 1) : null,
    prev: first && (backwards ? more : Boolean(opts.before ?? opts.after)) ? cursorAt(0) : null,
  };
}

/**
 * Counting a large scope reads its whole index (3 ms for 100k images on SQLite, 7 ms on PostgreSQL), yet the count
 * changes only when the scope's version does (every write moves it on, see write.server.ts). So counts are kept per
 * scope and version; the version was read with the scope, before the count, so a count is never older than it.
 */
const totals = new Map<string, number>();
const MAX_TOTALS = 5000;

/** How many images the scope holds. */
export async function gridTotal(scope: GridScope): Promise<number> {
  // Across projects the version does not follow memberships: counted afresh each time.
  const key = scope.kind === "all" ? null : `${scopeKey(scope)}@${scopeVersion(scope)}`;
  const known = key === null ? undefined : totals.get(key);
  if (known !== undefined) return known;
  const row = await scopeQuery(scope)
    .select(sql<number>`count(*)`.as("n"))
    .executeTakeFirstOrThrow();
  const n = Number(row.n);
  if (key === null) return n;
  remember(totals, key, n, MAX_TOTALS);
  return n;
}

/**
 * The cursor just before position `index` (0-based), so that `gridPage({ after })` starts there.
 * The virtual grid uses it to jump (a dragged scrollbar); it walks the index only, no rows are read.
 */
export async function cursorBefore(scope: GridScope, index: number): Promise<Cursor | null> {
  if (index <= 0) return null;
  const plan = searchPlan(scope);
  const key = keyOf(plan.sortKey);
  const rank = key.rank;
  const row = await scopeQuery(scope, plan)
    .select([key.t.as("t"), key.id.as("id")])
    .$if(rank !== null, (q) => q.select(rank!.as("rank")).orderBy(rank!, "desc"))
    .orderBy(key.t, "desc")
    .orderBy(key.id, "desc")
    .limit(1)
    .offset(index - 1)
    .executeTakeFirst();
  return row ? { rank: Number(row.rank ?? 0), t: Number(row.t), id: Number(row.id) } : null;
}

/** Which of `ids` are images of the scope (a forged or foreign id is simply not among them). */
export async function idsInScope(scope: GridScope, ids: number[]): Promise<number[]> {
  const wanted = possibleIds(ids);
  if (!wanted.length) return [];
  const rows = await scopeQuery(scope).select(sql.ref<number>("images.id").as("id")).where("images.id", "in", wanted).execute();
  return rows.map((r) => Number(r.id));
}

/** How many of a cross-project grid's images each project holds (the result screen's project facet), most first. */
export async function projectCounts(scope: AllProjectsScope): Promise<{ id: number; name: string; count: number }[]> {
  const rows = await scopeQuery(scope)
    .innerJoin("projects", "projects.id", "images.project_id")
    .select(["projects.id as pid", "projects.name as pname", sql<number>`count(*)`.as("n")])
    .groupBy(["projects.id", "projects.name"])
    .orderBy(sql`count(*)`, "desc")
    .orderBy("projects.name")
    .execute();
  return rows.map((r) => ({ id: Number(r.pid), name: String(r.pname), count: Number(r.n) }));
}
