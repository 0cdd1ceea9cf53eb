import { sql } from "kysely";
import { db } from "~/db/connection.server";
import type { Board } from "~/db/schema";
import { randomToken } from "~/lib/crypto.server";
import { ConflictError, InvalidError, NotFoundError } from "~/lib/errors";
import { recordedAs, type Actor } from "./actor";
import { permissionsOf, requireEdit, visibleProjectIds, type BoardScope, type ProjectScope } from "./scope.server";
import { reviewCounts, type ReviewCounts } from "./share-reviews.server";
import { isUniqueViolation, write, type Trx } from "./write.server";
import { requireLiveImage } from "./images.server";

export type BoardSummary = Pick<Board, "id" | "project_id" | "title" | "cover_image_id" | "is_client_board" | "updated_at">;

const columns = [
  "boards.id",
  "boards.project_id",
  "boards.title",
  "boards.cover_image_id",
  "boards.is_client_board",
  "boards.updated_at",
] as const;

export const BOARD_EXISTS = "Board name already exists";

/** Is the name taken in the project (compared trimmed and case-insensitively; titles are stored trimmed)? */
async function nameTaken(trx: Trx, projectId: number, title: string, except?: string) {
  let q = trx
    .selectFrom("boards")
    .select("id")
    .where("project_id", "=", projectId)
    .where(sql<boolean>`lower(title) = ${title.trim().toLowerCase()}`);
  if (except) q = q.where("id", "!=", except);
  return Boolean(await q.executeTakeFirst());
}

export async function createBoard(
  scope: ProjectScope | BoardScope,
  input: { title: string; imageIds?: number[]; clientBoard?: boolean },
): Promise<BoardSummary> {
  requireEdit(scope);
  const { actor, project } = scope;
  const now = Date.now();
  const id = randomToken(9);
  const title = input.title.trim();
  try {
    return await write(async (trx, touched) => {
      if (await nameTaken(trx, project.id, title)) throw new ConflictError(BOARD_EXISTS);
      const imageIds = input.imageIds?.length
        ? (
            await trx.selectFrom("images").select("id").where("project_id", "=", project.id).where("id", "in", input.imageIds).execute()
          ).map((r) => r.id)
        : [];
      if (input.imageIds && imageIds.length !== new Set(input.imageIds).size) throw new NotFoundError("Image not found");
      await trx
        .insertInto("boards")
        .values({
          id,
          project_id: project.id,
          title,
          cover_image_id: imageIds[0] ?? null,
          is_client_board: input.clientBoard ? 1 : 0,
          created_by: recordedAs(actor),
          created_at: now,
          updated_at: now,
        })
        .execute();
      if (imageIds.length)
        await trx
          .insertInto("board_images")
          .values(imageIds.map((image_id, i) => ({ board_id: id, image_id, added_by: recordedAs(actor), added_at: now + i })))
          .execute();
      touched.board(id);
      return trx.selectFrom("boards").select(columns).where("id", "=", id).executeTakeFirstOrThrow();
    }, now);
  } catch (err) {
    if (isUniqueViolation(err)) throw new ConflictError(BOARD_EXISTS);
    throw err;
  }
}

/** Renames a board (the same rules as a new name; its own current name is not a clash). */
export async function renameBoard(scope: BoardScope, title: string) {
  requireEdit(scope);
  const name = title.trim();
  try {
    await write(async (trx, touched) => {
      if (await nameTaken(trx, scope.project.id, name, scope.board.id)) throw new ConflictError(BOARD_EXISTS);
      await trx.updateTable("boards").set({ title: name }).where("id", "=", scope.board.id).execute();
      touched.board(scope.board.id);
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw new ConflictError(BOARD_EXISTS);
    throw err;
  }
}

/** Deletes a board: its pins go with it (the images stay in the project). */
export async function deleteBoard(scope: BoardScope) {
  requireEdit(scope);
  await write(async (trx) => {
    await trx.deleteFrom("boards").where("id", "=", scope.board.id).execute();
  });
}

export interface BoardOption {
  id: string;
  title: string;
  clientBoard: boolean;
}

/** The project's boards, by title: targets for Add / Copy / Move, and (client-level boards left out) for Pin. */
export async function boardsOfProject(scope: ProjectScope | BoardScope, opts: { pinnable?: boolean } = {}): Promise<BoardOption[]> {
  let q = db().selectFrom("boards").select(["id", "title", "is_client_board"]).where("project_id", "=", scope.project.id);
  if (opts.pinnable) q = q.where("is_client_board", "=", 0);
  const rows = await q
    .orderBy(sql`lower(title)`)
    .orderBy("id")
    .execute();
  return rows.map((r) => ({ id: r.id, title: r.title, clientBoard: r.is_client_board === 1 }));
}

/**
 * The board a form names as its target (pin, add, copy, move), of the scope's project, or NotFoundError with the
 * spec's brief 'Board ID not found, please refresh!': the page offered it, so it was deleted since (or is another
 * project's, which says nothing more).
 */
export const TARGET_GONE = "Board ID not found, please refresh!";

export async function boardOfProject(scope: ProjectScope | BoardScope, boardId: string): Promise<BoardOption> {
  const row = await db()
    .selectFrom("boards")
    .select(["id", "title", "is_client_board"])
    .where("id", "=", boardId)
    .where("project_id", "=", scope.project.id)
    .executeTakeFirst();
  if (!row) throw new NotFoundError(TARGET_GONE);
  return { id: row.id, title: row.title, clientBoard: row.is_client_board === 1 };
}

export type PinResult = { status: "success"; board: string } | { status: "exists"; board: string };

/**
 * Pins one image to a board of its project (the spec's pin: error, exists or success). Client-level boards take
 * no pins this way. The first image pinned to a board without a cover becomes its cover.
 */
export async function pinImage(scope: ProjectScope, imageId: number, boardId: string): Promise<PinResult> {
  requireEdit(scope);
  const board = await boardOfProject(scope, boardId);
  if (board.clientBoard) throw new InvalidError("Images are added to a client-level board from the board itself.");
  const now = Date.now();
  return write(async (trx, touched) => {
    await requireLiveImage(trx, scope.project.id, imageId);
    const added = await trx
      .insertInto("board_images")
      .values({ board_id: board.id, image_id: imageId, added_by: recordedAs(scope.actor), added_at: now })
      .onConflict((oc) => oc.columns(["board_id", "image_id"]).doNothing())
      .executeTakeFirst();
    if (!Number(added.numInsertedOrUpdatedRows ?? 0)) return { status: "exists" as const, board: board.title };
    await trx
      .updateTable("boards")
      .set({ cover_image_id: imageId })
      .where("id", "=", board.id)
      .where("cover_image_id", "is", null)
      .execute();
    touched.board(board.id);
    return { status: "success" as const, board: board.title };
  }, now);
}

/** "Set as cover": an image on the board becomes its cover. */
export async function setCover(scope: BoardScope, imageId: number) {
  requireEdit(scope);
  await write(async (trx, touched) => {
    const onBoard = await trx
      .selectFrom("board_images")
      .select("image_id")
      .where("board_id", "=", scope.board.id)
      .where("image_id", "=", imageId)
      .executeTakeFirst();
    if (!onBoard) throw new NotFoundError("Image not found");
    await trx.updateTable("boards").set({ cover_image_id: imageId }).where("id", "=", scope.board.id).execute();
    touched.board(scope.board.id);
  });
}

/** Whether an image is on the board now. */
export async function isOnBoard(scope: BoardScope, imageId: number): Promise<boolean> {
  const row = await db()
    .selectFrom("board_images")
    .select("image_id")
    .where("board_id", "=", scope.board.id)
    .where("image_id", "=", imageId)
    .executeTakeFirst();
  return Boolean(row);
}

/**
 * Takes one image off a board (not out of the project). False when it was no longer there ('Image already removed,
 * please refresh'). A board whose cover leaves gets the next image as its cover.
 */
export async function removeFromBoard(scope: BoardScope, imageId: number): Promise<boolean> {
  requireEdit(scope);
  return write(async (trx, touched) => {
    const removed = await trx
      .deleteFrom("board_images")
      .where("board_id", "=", scope.board.id)
      .where("image_id", "=", imageId)
      .executeTakeFirst();
    if (!Number(removed.numDeletedRows)) return false;
    await refreshCover(trx, scope.board.id);
    touched.board(scope.board.id);
    return true;
  });
}

/** A board's cover after images left it: kept when still on the board, else the first image pinned, else none. */
export async function refreshCover(trx: Trx, boardId: string) {
  const board = await trx.selectFrom("boards").select("cover_image_id").where("id", "=", boardId).executeTakeFirst();
  if (!board) return;
  if (board.cover_image_id !== null) {
    const still = await trx
      .selectFrom("board_images")
      .select("image_id")
      .where("board_id", "=", boardId)
      .where("image_id", "=", board.cover_image_id)
      .executeTakeFirst();
    if (still) return;
  }
  const first = await trx
    .selectFrom("board_images")
    .select("image_id")
    .where("board_id", "=", boardId)
    .orderBy("added_at")
    .orderBy("image_id")
    .limit(1)
    .executeTakeFirst();
  await trx
    .updateTable("boards")
    .set({ cover_image_id: first?.image_id ?? null })
    .where("id", "=", boardId)
    .execute();
}

export interface BoardCard {
  id: string;
  title: string;
  projectId: number;
  projectName: string;
  /** The cover's image id and thumbnail key, for the media route. */
  cover: { imageId: number; thumbKey: string } | null;
  imageCount: number;
  updatedAt: number;
  /** The actor may edit the board, and so share it. */
  canShare: boolean;
  /** What visitors of the board's share links said (the client review loop), when they said anything. */
  reviews: ReviewCounts | null;
}

/**
 * Boards for the all-boards page: newest change first (then by title), optionally filtered by a title search and a project.
 * Returns up to `limit` cards and whether more exist (the page grows by `limit`, the spec's 12 + 4 per step).
 */
export async function searchBoards(
  actor: Actor,
  opts: { q?: string; projectId?: number; limit: number },
): Promise<{ boards: BoardCard[]; more: boolean }> {
  let q = db()
    .selectFrom("boards")
    .innerJoin("projects", "projects.id", "boards.project_id")
    .leftJoin("project_members as m", (join) => join.onRef("m.project_id", "=", "projects.id").on("m.user_id", "=", actor.id))
    .leftJoin("images as cover", "cover.id", "boards.cover_image_id")
    .select((eb) => [
      "boards.id",
      "boards.title",
      "boards.project_id",
      "boards.updated_at",
      "projects.name as project_name",
      "cover.id as cover_id",
      "cover.thumb_key as cover_thumb",
      "m.role",
      eb
        .selectFrom("board_images")
        .select((e) => e.fn.countAll<number>().as("n"))
        .whereRef("board_images.board_id", "=", "boards.id")
        .as("image_count"),
    ])
    .where("boards.project_id", "in", visibleProjectIds(actor));
  const text = opts.q?.trim();
  // ESCAPE spelt out: SQLite has no default escape character for LIKE.
  if (text) q = q.where(sql<boolean>`lower(boards.title) like ${`%${escapeLike(text.toLowerCase())}%`} escape '\\'`);
  if (opts.projectId !== undefined) q = q.where("boards.project_id", "=", opts.projectId);
  const rows = await q
    .orderBy("boards.updated_at", "desc")
    // A write that moves a whole project's boards on (its attributes) gives them one version: they keep title order.
    .orderBy(sql`lower(boards.title)`)
    .orderBy("boards.id")
    .limit(opts.limit + 1)
    .execute();
  const shown = rows.slice(0, opts.limit);
  const reviews = await reviewCounts(shown.map((r) => r.id));
  return {
    more: rows.length > opts.limit,
    boards: shown.map((r) => ({
      id: r.id,
      title: r.title,
      projectId: r.project_id,
      projectName: r.project_name,
      cover: r.cover_id !== null && r.cover_thumb !== null ? { imageId: r.cover_id, thumbKey: r.cover_thumb } : null,
      imageCount: Number(r.image_count ?? 0),
      updatedAt: r.updated_at,
      canShare: permissionsOf(actor.role === "admin" ? "admin" : (r.role ?? "viewer")).edit,
      reviews: reviews.get(r.id) ?? null,
    })),
  };
}

/** LIKE patterns treat % and _ as wildcards; a search for them means the characters themselves. */
const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);
