import { sql } from "kysely";
import { db } from "~/db/connection.server";
import { TooManyRequestsError } from "~/lib/errors";
import { hitRateLimit } from "./rate-limits.server";
import type { BoardScope, SharedBoardScope } from "./scope.server";
import { sharedImage } from "./share-access.server";
import { write } from "./write.server";

/**
 * The client review loop: a share link's visitor marks an image Approved or Rejected and comments; the team sees
 * the reviews on the board (counts, the filter, the image panel).
 */

export const COMMENT_MAX = 500;
/** Reviews (marks and comments) one visitor of a link may post per hour. */
export const REVIEWS_PER_HOUR = 120;

export interface Visitor {
  key: string;
  name: string;
}

/**
 * A visitor marks an image Approved or Rejected and/or leaves a comment (plain text, at most 500 characters).
 * One review per visitor and image: a new mark or comment replaces theirs.
 */
export async function reviewImage(
  scope: SharedBoardScope,
  visitor: Visitor,
  imageId: number,
  input: { mark?: "approved" | "rejected" | null; comment?: string },
  clientIp: string | null = null,
) {
  const image = await sharedImage(scope, imageId);
  // Per visitor, and per link and address: a visitor key is only a cookie, which a client can drop for a new one.
  for (const [key, limit] of [
    [`share-review:${scope.link.id}:${visitor.key}`, REVIEWS_PER_HOUR],
    [`share-review-ip:${scope.link.id}:${clientIp ?? "unknown"}`, REVIEWS_PER_HOUR * 3],
  ] as const) {
    const limited = await hitRateLimit(key, limit, 3_600_000);
    if (!limited.allowed)
      throw new TooManyRequestsError("Too many reviews in a short time. Please wait a little.", limited.retryAfterSeconds);
  }
  const now = Date.now();
  const comment = input.comment === undefined ? undefined : input.comment.trim().slice(0, COMMENT_MAX) || null;
  await write(async (trx, touched) => {
    const existing = await trx
      .selectFrom("share_reviews")
      .select(["id", "mark", "comment"])
      .where("link_id", "=", scope.link.id)
      .where("visitor_key", "=", visitor.key)
      .where("image_id", "=", image.id)
      .executeTakeFirst();
    const mark = input.mark === undefined ? (existing?.mark ?? null) : input.mark;
    const text = comment === undefined ? (existing?.comment ?? null) : comment;
    if (existing)
      await trx
        .updateTable("share_reviews")
        .set({ mark, comment: text, visitor_name: visitor.name, updated_at: now })
        .where("id", "=", existing.id)
        .execute();
    else
      await trx
        .insertInto("share_reviews")
        .values({
          link_id: scope.link.id,
          image_id: image.id,
          visitor_key: visitor.key,
          visitor_name: visitor.name,
          mark,
          comment: text,
          created_at: now,
          updated_at: now,
        })
        .execute();
    // The team's board shows the reviews (counts, the filter): its version moves on.
    touched.board(scope.board.id);
  }, now);
}

/** A visitor's own reviews on some images (what the page shows them). */
/** The marks of a link's visitor on these images; none for a visitor without a cookie yet. */
export const visitorMarks = (scope: SharedBoardScope, visitor: { key: string } | null, imageIds: number[]) =>
  visitor
    ? visitorReviews(scope, visitor.key, imageIds)
    : Promise.resolve(new Map<number, { mark: string | null; comment: string | null }>());

export async function visitorReviews(scope: SharedBoardScope, visitorKey: string, imageIds: number[]) {
  if (!imageIds.length) return new Map<number, { mark: string | null; comment: string | null }>();
  const rows = await db()
    .selectFrom("share_reviews")
    .select(["image_id", "mark", "comment"])
    .where("link_id", "=", scope.link.id)
    .where("visitor_key", "=", visitorKey)
    .where("image_id", "in", imageIds)
    .execute();
  return new Map(rows.map((r) => [r.image_id, { mark: r.mark, comment: r.comment }]));
}

export interface ReviewEntry {
  imageId: number;
  visitorName: string;
  via: string;
  mark: "approved" | "rejected" | null;
  comment: string | null;
  updatedAt: number;
}

/** The reviews of one image on a board, for the team: who (name, and which link), what and when. */
export async function imageReviews(scope: BoardScope, imageId: number): Promise<ReviewEntry[]> {
  const rows = await db()
    .selectFrom("share_reviews as r")
    .innerJoin("share_links as l", "l.id", "r.link_id")
    .select(["r.image_id", "r.visitor_name", "r.mark", "r.comment", "r.updated_at", "l.recipient", "l.label"])
    .where("l.board_id", "=", scope.board.id)
    .where("r.image_id", "=", imageId)
    .orderBy("r.updated_at", "desc")
    .execute();
  return rows.map((r) => ({
    imageId: r.image_id,
    visitorName: r.visitor_name,
    via: r.recipient ?? r.label ?? "a link",
    mark: r.mark,
    comment: r.comment,
    updatedAt: Number(r.updated_at),
  }));
}

export interface ReviewCounts {
  approved: number;
  rejected: number;
  comments: number;
}

/** Review counts per board (for the boards' cards). */
export async function reviewCounts(boardIds: string[]): Promise<Map<string, ReviewCounts>> {
  if (!boardIds.length) return new Map();
  const rows = await db()
    .selectFrom("share_reviews as r")
    .innerJoin("share_links as l", "l.id", "r.link_id")
    .select([
      "l.board_id",
      sql<number>`sum(case when r.mark = 'approved' then 1 else 0 end)`.as("approved"),
      sql<number>`sum(case when r.mark = 'rejected' then 1 else 0 end)`.as("rejected"),
      sql<number>`sum(case when r.comment is not null then 1 else 0 end)`.as("comments"),
    ])
    .where("l.board_id", "in", boardIds)
    .groupBy("l.board_id")
    .execute();
  return new Map(
    rows.map((r) => [r.board_id, { approved: Number(r.approved), rejected: Number(r.rejected), comments: Number(r.comments) }]),
  );
}
