import { sql, type SelectQueryBuilder } from "kysely";
import { db } from "~/db/connection.server";
import { scopeKey, scopeVersion, type GridScope } from "./scope.server";

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
  return m ? { t: Number(m[1]), id: Number(m[2]) } : null;
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

/** The base query of a scope: its live images with their sort key `t`. */
function scopeQuery(scope: GridScope): GridQuery {
  if (scope.kind === "project")
    return db()
      .selectFrom("images")
      .select(["images.id", "images.title", "images.keywords", "images.thumb_key", "images.created_at as t"])
      .where("images.project_id", "=", scope.project.id)
      .where("images.deleted_at", "is", null) as GridQuery;
  let q = db()
    .selectFrom("board_images")
    .innerJoin("images", "images.id", "board_images.image_id")
    .select(["images.id", "images.title", "images.keywords", "images.thumb_key", "board_images.added_at as t"])
    .where("board_images.board_id", "=", scope.board.id)
    .where("images.deleted_at", "is", null);
  const review = scope.kind === "board" ? scope.review : undefined;
  if (review)
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
  return q as GridQuery;
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
  let q = scopeQuery(scope).clearSelect().select(sql.ref<number>("images.id").as("id"));
  if (picked.all) {
    if (picked.ids.length) q = q.where("images.id", "not in", picked.ids);
  } else q = q.where("images.id", "in", picked.ids.length ? picked.ids : [-1]);
  return q as SelectQueryBuilder<any, any, { id: number }>;
}

const sortColumns = (scope: GridScope) =>
  scope.kind === "project" ? (["images.created_at", "images.id"] as const) : (["board_images.added_at", "board_images.image_id"] as const);

/**
 * One page: after a cursor (the next page), before one (the previous page), or from the start.
 */
export async function gridPage(
  scope: GridScope,
  opts: { after?: Cursor | null; before?: Cursor | null; limit?: number } = {},
): Promise<GridPage> {
  const limit = Math.min(Math.max(opts.limit ?? 60, 1), MAX_PAGE);
  const [tCol, idCol] = sortColumns(scope);
  let q = scopeQuery(scope);
  const backwards = Boolean(opts.before);
  const at = opts.before ?? opts.after;
  // Row-value comparison: both dialects seek the (t, id) index directly, at any depth.
  if (at) q = q.where(sql<boolean>`(${sql.ref(tCol)}, ${sql.ref(idCol)}) ${sql.raw(backwards ? ">" : "<")} (${at.t}, ${at.id})`);
  const direction = backwards ? "asc" : "desc";
  const rows = await q
    .orderBy(tCol, direction)
    .orderBy(idCol, direction)
    .limit(limit + 1)
    .execute();
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
  const key = `${scopeKey(scope)}@${scopeVersion(scope)}`;
  const known = totals.get(key);
  if (known !== undefined) return known;
  const row = await scopeQuery(scope)
    .clearSelect()
    .select(sql<number>`count(*)`.as("n"))
    .executeTakeFirstOrThrow();
  const n = Number(row.n);
  if (totals.size >= MAX_TOTALS) totals.delete(totals.keys().next().value!);
  totals.set(key, n);
  return n;
}

/**
 * The cursor just before position `index` (0-based), so that `gridPage({ after })` starts there.
 * The virtual grid uses it to jump (a dragged scrollbar); it walks the index only, no rows are read.
 */
export async function cursorBefore(scope: GridScope, index: number): Promise<Cursor | null> {
  if (index <= 0) return null;
  const [tCol, idCol] = sortColumns(scope);
  const row = await scopeQuery(scope)
    .clearSelect()
    .select([sql.ref<number>(tCol).as("t"), sql.ref<number>(idCol).as("id")])
    .orderBy(tCol, "desc")
    .orderBy(idCol, "desc")
    .limit(1)
    .offset(index - 1)
    .executeTakeFirst();
  return row ? { t: Number(row.t), id: Number(row.id) } : null;
}

/** Which of `ids` are images of the scope (a forged or foreign id is simply not among them). */
export async function idsInScope(scope: GridScope, ids: number[]): Promise<number[]> {
  const wanted = [...new Set(ids.filter(Number.isSafeInteger))];
  if (!wanted.length) return [];
  const rows = await scopeQuery(scope)
    .clearSelect()
    .select(sql.ref<number>("images.id").as("id"))
    .where("images.id", "in", wanted)
    .execute();
  return rows.map((r) => Number(r.id));
}
