import { remember } from "~/lib/bounded-cache";
import { parseId, possibleIds } from "~/lib/ids";
import { sql, type AliasedRawBuilder, type SelectQueryBuilder } from "kysely";
import { db } from "~/db/connection.server";
import { scopeKey, scopeVersion, visibleProjectIds, type AllProjectsScope, type GridScope } from "./scope.server";
import { hasSmart } from "~/lib/smart-tags";
import {
  keywordIds,
  keywordMatches,
  prefixWords,
  strongMatchesAtLeast,
  tagMatches,
  tagTermsOf,
  termsOf,
  type IdWindow,
} from "./search.server";

export type { GridScope };

/**
 * The image grid of a resolved scope (a project, a board, a shared board), paged by keyset: newest first, id as
 * the tiebreak. Projects order by the image's creation time, boards by when the image was added to the board.
 * A page costs the same at any depth: it seeks in the index from the cursor, never skips rows.
 * Access was settled when the scope was resolved (scope.server.ts); nothing here checks membership again.
 */
export interface GridCard {
  id: number;
  title: string;
  keywords: string[];
  thumbKey: string;
}

export interface Cursor {
  t: number;
  id: number;
}

export interface GridPage {
  cards: GridCard[];
  /** Cursor of the last card, when more follow. */
  next: string | null;
  /** Cursor of the first card, when cards precede it. */
  prev: string | null;
}

export const encodeCursor = (c: Cursor) => Buffer.from(`${c.t}.${c.id}`).toString("base64url");
export function decodeCursor(value: string | null | undefined): Cursor | null {
  if (!value || value.length > 64) return null;
  const m = /^(\d{1,16})\.(\d{1,12})$/.exec(Buffer.from(value, "base64url").toString("latin1"));
  const id = m && parseId(m[2]);
  return m && id ? { t: Number(m[1]), id } : null;
}

export const MAX_PAGE = 300;

interface GridRow {
  id: number;
  title: string;
  keywords: string;
  thumb_key: string;
  t: number;
}
// The two scopes join different tables; callers only use the shared row shape and sort columns.
type GridQuery = SelectQueryBuilder<any, any, GridRow>;

/**
 * Where a card sorts: newest first (a project by the image's creation, a board by when the image was added), id as
 * the tiebreak. A keyword search ranks by relevance first: images whose title or keywords hold every term come
 * before those that match only in the description, OCR text or file name; a smart search ranks by how many of its
 * tags an image holds, above that. The rank rides in the sort key's high bits (2^42 is added to t of the first kind,
 * 2^43 per tag held; times in ms stay below 2^42 until the year 2109, 16 tags stay below 2^48), so keyset paging,
 * cursors and jumps work unchanged.
 */
const RANK = 2 ** 42;
function sortKey(scope: GridScope) {
  const onBoard = scope.kind === "board" || scope.kind === "shared";
  const time = onBoard ? sql.ref<number>("board_images.added_at") : sql.ref<number>("images.created_at");
  const id = onBoard ? sql.ref<number>("board_images.image_id") : sql.ref<number>("images.id");
  let t = termsOf(scope.filter?.q).length ? sql<number>`(${sql.ref("m.strong")} * ${sql.lit(RANK)} + ${time})` : time;
  if (tagTermsOf(scope.filter?.tags).length) t = sql<number>`(${sql.ref("s.n")} * ${sql.lit(RANK * 2)} + ${t})`;
  return { t, id };
}

/**
 * A project's keyword search walked along its keyset index instead of joined (see walkedRows): the images holding
 * every term in the title or keywords (`strong`, the ranking's first tier), or the others that match (`rest`).
 */
type Walk = "strong" | "rest";

/** What a card shows of its image (with the sort key `t`, a grid row). */
const CARD_COLUMNS = ["images.id", "images.title", "images.keywords", "images.thumb_key"] as const;

/** The base query of a scope: its live images with their sort key `t`, narrowed by the scope's filter. */
function scopeQuery(scope: GridScope, walk?: Walk, window?: Window): GridQuery {
  const terms = termsOf(scope.filter?.q);
  const t = walk
    ? walk === "strong"
      ? sql<number>`(${sql.lit(RANK)} + ${sql.ref("images.created_at")})`
      : sql.ref<number>("images.created_at")
    : sortKey(scope).t;
  const smart = hasSmart(scope.filter);
  const tags = tagTermsOf(scope.filter?.tags);
  const columns = [...CARD_COLUMNS, t.as("t")] as const;
  // A search joins its matches (driven by the full-text index); otherwise the scope's own index drives.
  const matchIn = scope.kind === "shared" && !scope.link.allowDownload ? "noFileName" : "anywhere";
  const matches = terms.length && !walk ? keywordMatches(terms, matchIn).as("m") : null;
  const tagged = tags.length ? tagMatches(tags).as("s") : null;
  let q: GridQuery;
  if (scope.kind === "project" || scope.kind === "all") {
    // A search goes from its matches to their images: SQLite otherwise read the project's whole index and looked each
    // image up among the matches, so the rarer the word the slower its page (a word in 1 image of 100k: 6.4 ms instead
    // of 0.03 ms; in 800: 9 ms instead of 2 ms; a smart search's five tags: 22 ms instead of 9 ms). SQLite keeps a
    // CROSS JOIN's order; PostgreSQL plans it as any inner join. Common words are walked instead (walkedRows).
    const driver: AliasedRawBuilder<{ id: number }, "m" | "s"> | null = matches ?? tagged;
    const alias = matches ? "m" : "s";
    let images: SelectQueryBuilder<any, any, any> = driver
      ? db().selectFrom(driver).crossJoin("images").whereRef("images.id", "=", `${alias}.id`)
      : db().selectFrom("images");
    if (matches && tagged) images = images.innerJoin(tagged, "s.id", "images.id");
    q = (
      scope.kind === "project"
        ? images.select(columns).where("images.project_id", "=", scope.project.id)
        : images.select(columns).where("images.project_id", "in", visibleProjectIds(scope.actor))
    ) as GridQuery;
  } else {
    let onBoard: SelectQueryBuilder<any, any, any> = db()
      .selectFrom("board_images")
      .innerJoin("images", "images.id", "board_images.image_id");
    if (matches) onBoard = onBoard.innerJoin(matches, "m.id", "images.id");
    if (tagged) onBoard = onBoard.innerJoin(tagged, "s.id", "images.id");
    q = onBoard.select(columns).where("board_images.board_id", "=", scope.board.id) as GridQuery;
  }
  q = q.where("images.deleted_at", "is", null);
  if (walk === "strong") q = q.where("images.id", "in", keywordIds(terms, "strong", window));
  if (walk === "rest")
    q = q.where("images.id", "in", keywordIds(terms, "anywhere")).where("images.id", "not in", keywordIds(terms, "strong"));
  // Across projects only a search makes a grid: text without a word finds nothing (in one project it filters
  // nothing). A smart search whose tags were all removed (or that found none) finds nothing either.
  if ((!terms.length && !tags.length && scope.kind === "all") || (smart && !tags.length)) q = q.where(sql<boolean>`1 = 0`);
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
      // A walk checks image by image (one primary-key look-up each); otherwise the value's images are read once.
      return walk ? eb.exists(holding.whereRef("av.image_id", "=", "images.id")) : eb("images.id", "in", holding);
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
export function selectedImageIds(scope: GridScope, picked: Picked) {
  return pickedImages(scope, picked).clearSelect().select(sql.ref<number>("images.id").as("id")) as SelectQueryBuilder<
    any,
    any,
    { id: number }
  >;
}

/** The scope's query (images, joined and filtered as its grid is) narrowed to a selection; select what you need. */
export function pickedImages(scope: GridScope, picked: Picked) {
  const q = scopeQuery(scope);
  if (picked.all) return picked.ids.length ? q.where("images.id", "not in", picked.ids) : q;
  return q.where("images.id", "in", picked.ids.length ? picked.ids : [-1]);
}

/** An image's place in a project's keyset index (its creation, id) against a cursor's, as the index compares them. */
const byCreation = (op: "<" | ">=", c: Cursor) =>
  sql<boolean>`(${sql.ref("images.created_at")}, ${sql.ref("images.id")}) ${sql.raw(op)} (${c.t}, ${c.id})`;

/**
 * How many title or keyword matches (in any project) make a word common enough to walk, and to walk in windows of
 * the project's newest images (see strongTier); settings so tests can take every path.
 */
export const walkSettings = { from: 2000, windowFrom: 20_000, window: 4000 };

/**
 * A common word in a project's keyword search: walked along the project's keyset index, newest first, checking each
 * image against the word's matches and the attribute values, until the page is full, instead of joining and sorting
 * every match (a word in 10% of a 1M project: 14 ms instead of 337 ms a page, bench P5-1m). The ranking's two tiers
 * are walked in turn: title or keyword matches (their `t` carries the rank), then the rest. A rare word is joined as
 * before (a walk would read the whole index to find it), as are pages backwards, boards and smart searches.
 * Null when the page is not walked.
 */
async function walkedRows(scope: GridScope, after: Cursor | null, n: number): Promise<GridRow[] | null> {
  if (scope.kind !== "project" || hasSmart(scope.filter)) return null;
  const terms = termsOf(scope.filter?.q);
  if (!terms.length || !(await strongMatchesAtLeast(terms, walkSettings.from))) return null;
  const tier = (walk: Walk, from: Cursor | null, count: number, window?: Window) => {
    let q = scopeQuery(scope, walk, window);
    // Ordered by the index's own columns (an expression would sort every match); the cursor in the same terms.
    if (from) q = q.where(byCreation("<", from));
    if (window) q = q.where(byCreation(">=", window.edge));
    return q.orderBy(sql.ref("images.created_at"), "desc").orderBy(sql.ref("images.id"), "desc").limit(count).execute();
  };
  /**
   * The first tier of a very common word: the walk checks each image against the word's matches, which the database
   * first reads into a list, all of them (SQLite: 100,000 for a word in 10% of a 1M project, 13 ms of the page's 14).
   * So the walk goes through windows of the project's newest images, each with only the matches among the ids it
   * spans (FTS5 seeks the id range in its index) and the last word's prefix spelled out (`prefixWords`: FTS5 would
   * merge the prefix's lists whole first): bench P5-1m's loader p99 21 → 2.3 ms. When a window does not fill the
   * page (the word may be rarer in this project than its count says, or the attribute values narrow it), the next
   * is sized by the hits the last one gave; past 16 first windows, or near the project's end, the walk goes on
   * unwindowed. A word of 10,000 matches (the 100k project's) would gain 0.6 ms a page and pay it in two more
   * statements, so windows start at 20,000 (decision 0012).
   */
  const strongTier = async (from: Cursor | null, count: number) => {
    if (!(await strongMatchesAtLeast(terms, walkSettings.windowFrom))) return tier("strong", from, count);
    const rows: GridRow[] = [];
    let cursor = from;
    let size = walkSettings.window;
    const spelledOut = await prefixWords(terms, `${scopeKey(scope)}@${scopeVersion(scope)}`);
    while (size <= walkSettings.window * 16) {
      const window = await newestWindow(scope.project.id, cursor, size);
      if (!window) break;
      const found = await tier("strong", cursor, count - rows.length, { ...window, spelledOut });
      rows.push(...found);
      if (rows.length >= count) return rows;
      cursor = window.edge;
      // The next window as large as this one's hits say the rest of the page needs, half again for luck.
      size = Math.ceil(((size * (count - rows.length)) / Math.max(found.length, 1)) * 1.5);
    }
    return [...rows, ...(await tier("strong", cursor, count - rows.length))];
  };
  if (after && after.t < RANK) return tier("rest", after, n);
  const strong = await strongTier(after && { t: after.t - RANK, id: after.id }, n);
  return strong.length >= n ? strong : [...strong, ...(await tier("rest", null, n - strong.length))];
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
    const q = db().selectFrom("images").where("images.project_id", "=", projectId).where("images.deleted_at", "is", null);
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
  const edge = { t: Number(last.t), id: Number(last.id) };
  const range = await live()
    .where(byCreation(">=", edge))
    .select((eb) => [eb.fn.min("images.id").as("lo"), eb.fn.max("images.id").as("hi")])
    .executeTakeFirstOrThrow();
  return { edge, ids: { lo: Number(range.lo), hi: Number(range.hi) } };
}

/**
 * One page: after a cursor (the next page), before one (the previous page), or from the start.
 */
export async function gridPage(
  scope: GridScope,
  opts: { after?: Cursor | null; before?: Cursor | null; limit?: number } = {},
): Promise<GridPage> {
  const limit = Math.min(Math.max(opts.limit ?? 60, 1), MAX_PAGE);
  const key = sortKey(scope);
  let q = scopeQuery(scope);
  const backwards = Boolean(opts.before);
  const at = opts.before ?? opts.after;
  // Row-value comparison: both dialects seek the (t, id) index directly, at any depth.
  if (at) q = q.where(sql<boolean>`(${key.t}, ${key.id}) ${sql.raw(backwards ? ">" : "<")} (${at.t}, ${at.id})`);
  const direction = backwards ? "asc" : "desc";
  // The page's keys are sorted first and its cards' columns read after, for its rows only: a search sorts every
  // match, and sorting whole rows (title, keywords) cost twice as much (a smart search's tag in 13,000 images of the
  // 100k project: 74 → 35 ms for the bare statement).
  const sorted = () => {
    const keys = q
      .clearSelect()
      .select([sql.ref<number>("images.id").as("id"), key.t.as("t")])
      .orderBy(key.t, direction)
      .orderBy(key.id, direction)
      .limit(limit + 1)
      .as("k");
    return db()
      .selectFrom(keys)
      .crossJoin("images")
      .whereRef("images.id", "=", "k.id")
      .select([...CARD_COLUMNS, "k.t"])
      .orderBy("k.t", direction)
      .orderBy("k.id", direction)
      .execute() as Promise<GridRow[]>;
  };
  const rows = (!backwards && (await walkedRows(scope, opts.after ?? null, limit + 1))) || (await sorted());
  const more = rows.length > limit;
  const page = rows.slice(0, limit);
  if (backwards) page.reverse();
  const cards = page.map((r) => ({
    id: r.id,
    title: r.title,
    keywords: (JSON.parse(r.keywords) as string[]).slice(0, 5),
    thumbKey: r.thumb_key,
  }));
  const first = page[0];
  const last = page[page.length - 1];
  return {
    cards,
    next: last && (backwards || more) ? encodeCursor({ t: last.t, id: last.id }) : null,
    prev: first && (backwards ? more : Boolean(at)) ? encodeCursor({ t: first.t, id: first.id }) : null,
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
    .clearSelect()
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
  const key = sortKey(scope);
  const row = await scopeQuery(scope)
    .clearSelect()
    .select([key.t.as("t"), key.id.as("id")])
    .orderBy(key.t, "desc")
    .orderBy(key.id, "desc")
    .limit(1)
    .offset(index - 1)
    .executeTakeFirst();
  return row ? { t: Number(row.t), id: Number(row.id) } : null;
}

/** Which of `ids` are images of the scope (a forged or foreign id is simply not among them). */
export async function idsInScope(scope: GridScope, ids: number[]): Promise<number[]> {
  const wanted = possibleIds(ids);
  if (!wanted.length) return [];
  const rows = await scopeQuery(scope)
    .clearSelect()
    .select(sql.ref<number>("images.id").as("id"))
    .where("images.id", "in", wanted)
    .execute();
  return rows.map((r) => Number(r.id));
}

/** How many of a cross-project grid's images each project holds (the result screen's project facet), most first. */
export async function projectCounts(scope: AllProjectsScope): Promise<{ id: number; name: string; count: number }[]> {
  const rows = await scopeQuery(scope)
    .clearSelect()
    .innerJoin("projects", "projects.id", "images.project_id")
    .select(["projects.id as pid", "projects.name as pname", sql<number>`count(*)`.as("n")])
    .groupBy(["projects.id", "projects.name"])
    .orderBy(sql`count(*)`, "desc")
    .orderBy("projects.name")
    .execute();
  return rows.map((r) => ({ id: Number(r.pid), name: String(r.pname), count: Number(r.n) }));
}
