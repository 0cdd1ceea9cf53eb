import { db } from "~/db/connection.server";

/** The daily digest of review activity mailed to each board's owner (services/sharing.server.ts sends it). */

export interface DigestItem {
  boardId: string;
  boardTitle: string;
  projectId: number;
  ownerEmail: string;
  ownerName: string;
  reviews: { image: string; visitor: string; mark: string | null; comment: string | null; at: number }[];
}

/**
 * Boards with review activity since their owner's last digest, with that activity (the daily digest job). The
 * digest time moves on when the mail is queued (markDigested).
 */
export async function pendingDigests(now = Date.now()): Promise<DigestItem[]> {
  const rows = await db()
    .selectFrom("share_reviews as r")
    .innerJoin("share_links as l", "l.id", "r.link_id")
    .innerJoin("boards as b", "b.id", "l.board_id")
    .innerJoin("users as u", "u.id", "b.created_by")
    .innerJoin("images as i", "i.id", "r.image_id")
    .select([
      "b.id as board_id",
      "b.title",
      "b.project_id",
      "u.email",
      "u.name",
      "i.title as image",
      "r.visitor_name",
      "r.mark",
      "r.comment",
      "r.updated_at",
    ])
    .where("u.status", "=", "active")
    .where((eb) => eb.or([eb("b.review_digest_at", "is", null), eb("r.updated_at", ">", eb.ref("b.review_digest_at"))]))
    .where("r.updated_at", "<=", now)
    .orderBy("b.id")
    .orderBy("r.updated_at")
    .execute();
  const byBoard = new Map<string, DigestItem>();
  for (const r of rows) {
    const item = byBoard.get(r.board_id) ?? {
      boardId: r.board_id,
      boardTitle: r.title,
      projectId: r.project_id,
      ownerEmail: r.email,
      ownerName: r.name,
      reviews: [],
    };
    item.reviews.push({ image: r.image, visitor: r.visitor_name, mark: r.mark, comment: r.comment, at: Number(r.updated_at) });
    byBoard.set(r.board_id, item);
  }
  return [...byBoard.values()];
}

export async function markDigested(boardId: string, at: number) {
  await db().updateTable("boards").set({ review_digest_at: at }).where("id", "=", boardId).execute();
}
