import { sql } from "kysely";
import { db } from "~/db/connection.server";
import type { Board } from "~/db/schema";
import { randomToken } from "~/lib/crypto.server";
import { visibleProjectIds } from "./access.server";
import { NotFoundError, recordedAs, type Actor } from "./actor";
import { assertCanEdit } from "./projects.server";

export type BoardSummary = Pick<Board, "id" | "project_id" | "title" | "cover_image_id" | "is_client_board" | "updated_at">;

const columns = ["boards.id", "boards.project_id", "boards.title", "boards.cover_image_id", "boards.is_client_board", "boards.updated_at"] as const;

export async function getBoard(actor: Actor, boardId: string): Promise<BoardSummary> {
  const row = await db()
    .selectFrom("boards")
    .select(columns)
    .where("boards.id", "=", boardId)
    .where("boards.project_id", "in", visibleProjectIds(actor))
    .executeTakeFirst();
  if (!row) throw new NotFoundError(`No Board Found with ID: ${boardId}`);
  return row;
}

export async function createBoard(
  actor: Actor,
  input: { projectId: number; title: string; imageIds?: number[]; clientBoard?: boolean },
): Promise<BoardSummary> {
  await assertCanEdit(actor, input.projectId);
  const now = Date.now();
  const id = randomToken(9);
  return db()
    .transaction()
    .execute(async (trx) => {
      const imageIds = input.imageIds?.length
        ? (
            await trx
              .selectFrom("images")
              .select("id")
              .where("project_id", "=", input.projectId)
              .where("id", "in", input.imageIds)
              .where("deleted_at", "is", null)
              .execute()
          ).map((r) => r.id)
        : [];
      if (input.imageIds && imageIds.length !== new Set(input.imageIds).size) throw new NotFoundError("Image not found");
      await trx
        .insertInto("boards")
        .values({
          id,
          project_id: input.projectId,
          title: input.title.trim(),
          cover_image_id: imageIds[0] ?? null,
          is_client_board: input.clientBoard ? 1 : 0,
          active: 1,
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
      return trx.selectFrom("boards").select(columns).where("id", "=", id).executeTakeFirstOrThrow();
    });
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
}

/**
 * Boards for the all-boards page: newest change first, optionally filtered by a title search and a project.
 * Returns up to `limit` cards and whether more exist (the page grows by `limit`, the spec's 12 + 4 per step).
 */
export async function searchBoards(
  actor: Actor,
  opts: { q?: string; projectId?: number; limit: number },
): Promise<{ boards: BoardCard[]; more: boolean }> {
  let q = db()
    .selectFrom("boards")
    .innerJoin("projects", "projects.id", "boards.project_id")
    .leftJoin("images as cover", (join) => join.onRef("cover.id", "=", "boards.cover_image_id").on("cover.deleted_at", "is", null))
    .select((eb) => [
      "boards.id",
      "boards.title",
      "boards.project_id",
      "boards.updated_at",
      "projects.name as project_name",
      "cover.id as cover_id",
      "cover.thumb_key as cover_thumb",
      eb.selectFrom("board_images").select((e) => e.fn.countAll<number>().as("n")).whereRef("board_images.board_id", "=", "boards.id").as("image_count"),
    ])
    .where("boards.project_id", "in", visibleProjectIds(actor))
    .where("boards.active", "=", 1);
  const text = opts.q?.trim();
  // ESCAPE spelt out: SQLite has no default escape character for LIKE.
  if (text) q = q.where(sql<boolean>`lower(boards.title) like ${`%${escapeLike(text.toLowerCase())}%`} escape '\\'`);
  if (opts.projectId !== undefined) q = q.where("boards.project_id", "=", opts.projectId);
  const rows = await q.orderBy("boards.updated_at", "desc").orderBy("boards.id").limit(opts.limit + 1).execute();
  return {
    more: rows.length > opts.limit,
    boards: rows.slice(0, opts.limit).map((r) => ({
      id: r.id,
      title: r.title,
      projectId: r.project_id,
      projectName: r.project_name,
      cover: r.cover_id !== null && r.cover_thumb !== null ? { imageId: r.cover_id, thumbKey: r.cover_thumb } : null,
      imageCount: Number(r.image_count ?? 0),
      updatedAt: r.updated_at,
    })),
  };
}

/** LIKE patterns treat % and _ as wildcards; a search for them means the characters themselves. */
const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);
