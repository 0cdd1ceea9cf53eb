import { sql, type SelectQueryBuilder } from "kysely";
import { db } from "~/db/connection.server";
import { visibleProjectIds } from "./access.server";
import { NotFoundError, type Actor } from "./actor";

/**
 * The image grid of a project or a board, paged by keyset: newest first, id as the tiebreak.
 * Projects order by the image's creation time, boards by when the image was added to the board.
 * A page costs the same at any depth: it seeks in the index from the cursor, never skips rows.
 */
export type GridScope = { kind: "project"; projectId: number } | { kind: "board"; boardId: string };

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

/** The base query of a scope: its visible, undeleted images with their sort key `t`. Not found when outside the actor's projects. */
async function scopeQuery(actor: Actor, scope: GridScope): Promise<GridQuery> {
  if (scope.kind === "project") {
    const project = Number.isSafeInteger(scope.projectId)
      ? await db().selectFrom("projects").select("id").where("id", "=", scope.projectId).where("id", "in", visibleProjectIds(actor)).executeTakeFirst()
      : undefined;
    if (!project) throw new NotFoundError(`No Projects Found with ID: ${scope.projectId}`);
    return db()
      .selectFrom("images")
      .select(["images.id", "images.title", "images.keywords", "images.thumb_key", "images.created_at as t"])
      .where("images.project_id", "=", project.id)
      .where("images.deleted_at", "is", null) as GridQuery;
  }
  const board = await db()
    .selectFrom("boards")
    .select("id")
    .where("id", "=", scope.boardId)
    .where("project_id", "in", visibleProjectIds(actor))
    .executeTakeFirst();
  if (!board) throw new NotFoundError(`No Board Found with ID: ${scope.boardId}`);
  return db()
    .selectFrom("board_images")
    .innerJoin("images", "images.id", "board_images.image_id")
    .select(["images.id", "images.title", "images.keywords", "images.thumb_key", "board_images.added_at as t"])
    .where("board_images.board_id", "=", board.id)
    .where("images.deleted_at", "is", null) as GridQuery;
}

const sortColumns = (scope: GridScope) =>
  scope.kind === "project" ? (["images.created_at", "images.id"] as const) : (["board_images.added_at", "board_images.image_id"] as const);

/**
 * One page: after a cursor (the next page), before one (the previous page), or from the start.
 */
export async function gridPage(
  actor: Actor,
  scope: GridScope,
  opts: { after?: Cursor | null; before?: Cursor | null; limit?: number } = {},
): Promise<GridPage> {
  const limit = Math.min(Math.max(opts.limit ?? 60, 1), MAX_PAGE);
  const [tCol, idCol] = sortColumns(scope);
  let q = await scopeQuery(actor, scope);
  const backwards = Boolean(opts.before);
  const at = opts.before ?? opts.after;
  // Row-value comparison: both dialects seek the (t, id) index directly, at any depth.
  if (at) q = q.where(sql<boolean>`(${sql.ref(tCol)}, ${sql.ref(idCol)}) ${sql.raw(backwards ? ">" : "<")} (${at.t}, ${at.id})`);
  const direction = backwards ? "asc" : "desc";
  const rows = await q.orderBy(tCol, direction).orderBy(idCol, direction).limit(limit + 1).execute();
  const more = rows.length > limit;
  const page = rows.slice(0, limit);
  if (backwards) page.reverse();
  const cards = page.map((r) => ({ id: r.id, title: r.title, keywords: (JSON.parse(r.keywords) as string[]).slice(0, 5), thumbKey: r.thumb_key }));
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
 * changes only when the scope's version does (every write moves it on, see touchProject). So counts are kept per
 * scope and version: the version is read first, so a count is never older than the version it is filed under.
 */
const totals = new Map<string, number>();
const MAX_TOTALS = 5000;

/** How many images the scope holds. */
export async function gridTotal(actor: Actor, scope: GridScope): Promise<number> {
  const version = await gridVersion(actor, scope);
  const key = `${scope.kind === "project" ? `p${scope.projectId}` : `b${scope.boardId}`}@${version}`;
  const known = totals.get(key);
  if (known !== undefined) return known;
  const q = await scopeQuery(actor, scope);
  const row = await q.clearSelect().select(sql<number>`count(*)`.as("n")).executeTakeFirstOrThrow();
  const n = Number(row.n);
  if (totals.size >= MAX_TOTALS) totals.delete(totals.keys().next().value!);
  totals.set(key, n);
  return n;
}

/**
 * The cursor just before position `index` (0-based), so that `gridPage({ after })` starts there.
 * The virtual grid uses it to jump (a dragged scrollbar); it walks the index only, no rows are read.
 */
export async function cursorBefore(actor: Actor, scope: GridScope, index: number): Promise<Cursor | null> {
  if (index <= 0) return null;
  const [tCol, idCol] = sortColumns(scope);
  const q = await scopeQuery(actor, scope);
  const row = await q
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
export async function idsInScope(actor: Actor, scope: GridScope, ids: number[]): Promise<number[]> {
  if (!ids.length) return [];
  const q = await scopeQuery(actor, scope);
  return (await q.clearSelect().select(sql.ref<number>("images.id").as("id")).where("images.id", "in", ids).execute()).map((r) => Number(r.id));
}

/**
 * A value that changes whenever the scope's content does: the project's or board's updated_at, which
 * every write to its images moves on. Used for ETags and for the "New Data Loaded" check.
 */
export async function gridVersion(actor: Actor, scope: GridScope): Promise<string> {
  const row =
    scope.kind === "project"
      ? await db().selectFrom("projects").select("updated_at").where("id", "=", scope.projectId).where("id", "in", visibleProjectIds(actor)).executeTakeFirst()
      : await db().selectFrom("boards").select("updated_at").where("id", "=", scope.boardId).where("project_id", "in", visibleProjectIds(actor)).executeTakeFirst();
  if (!row) throw new NotFoundError(scope.kind === "project" ? `No Projects Found with ID: ${scope.projectId}` : `No Board Found with ID: ${scope.boardId}`);
  return String(row.updated_at);
}
