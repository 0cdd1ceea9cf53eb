import { timingSafeEqual } from "node:crypto";
import { sql } from "kysely";
import { db, type DB } from "~/db/connection.server";
import { randomToken, sha256 } from "~/lib/crypto.server";
import { getErrorMessage, InvalidError, NotFoundError, TooManyRequestsError } from "~/lib/errors";
import { log } from "~/lib/log.server";
import { type ExpiryChoice } from "~/lib/schemas";
import { recordedAs } from "./actor";
import { byActor, recordAudit } from "./audit.server";
import { objectOf } from "./images.server";
import { hitRateLimit } from "./rate-limits.server";
import { requireEdit, type BoardScope, type SharedBoardScope } from "./scope.server";
import { write } from "./write.server";

/**
 * Boards shared through links, one per recipient (so access can be revoked and views counted per person), and the
 * client review loop. A link's URL is `/shared-board/<board id>:<token>`: 256 random bits, stored only as their
 * SHA-256, looked up by that hash and compared in constant time. A link's visitor is a second kind of actor: a
 * read-only `SharedBoardScope` on one board (app/models/scope.server.ts), never a session.
 */

export interface LinkOptions {
  expiry: ExpiryChoice;
  allowDownload: boolean;
  showMetadata: boolean;
}

const DAY = 86_400_000;
const expiresAt = (choice: ExpiryChoice, from: number) => (choice === "never" ? null : from + Number(choice) * DAY);

export interface NewLink {
  id: number;
  recipient: string | null;
  /** The link's path, with its token: shown or mailed once, never stored. */
  path: string;
  expiresAt: number | null;
}

/** One link per recipient (or one without a recipient, with a label, to paste into a report). */
export async function createShareLinks(
  scope: BoardScope,
  recipients: (string | null)[],
  options: LinkOptions,
  label: string | null = null,
): Promise<NewLink[]> {
  requireEdit(scope);
  const now = Date.now();
  const made = recipients.map((recipient) => ({ recipient, token: randomToken(32) }));
  return write(async (trx) => {
    const links: NewLink[] = [];
    for (const { recipient, token } of made) {
      const row = await trx
        .insertInto("share_links")
        .values({
          board_id: scope.board.id,
          token_hash: sha256(token),
          created_by: recordedAs(scope.actor),
          created_at: now,
          expires_at: expiresAt(options.expiry, now),
          revoked_at: null,
          recipient,
          label: recipient ? null : label,
          allow_download: options.allowDownload ? 1 : 0,
          show_metadata: options.showMetadata ? 1 : 0,
          last_opened_at: null,
        })
        .returning(["id", "expires_at"])
        .executeTakeFirstOrThrow();
      links.push({ id: row.id, recipient, path: `/shared-board/${scope.board.id}:${token}`, expiresAt: row.expires_at });
    }
    for (const link of links)
      await recordAudit(
        {
          action: "share.created",
          ...byActor(scope.actor),
          subject: `board:${scope.board.id}`,
          detail: { link: link.id, recipient: link.recipient },
        },
        trx,
      );
    return links;
  }, now);
}

export interface ManagedLink {
  id: number;
  recipient: string | null;
  label: string | null;
  createdBy: string | null;
  createdAt: number;
  expiresAt: number | null;
  revokedAt: number | null;
  lastOpenedAt: number | null;
  views: number;
  downloads: number;
  reviews: number;
  allowDownload: boolean;
  showMetadata: boolean;
}

/** The board's links, newest first, with who made them, their counts and their reviews. */
export async function listShareLinks(scope: BoardScope): Promise<ManagedLink[]> {
  await flushViews(); // the views this process counted so far, so that the team sees every one
  const rows = await db()
    .selectFrom("share_links as l")
    .leftJoin("users as u", "u.id", "l.created_by")
    .select((eb) => [
      "l.id",
      "l.recipient",
      "l.label",
      "l.created_at",
      "l.expires_at",
      "l.revoked_at",
      "l.last_opened_at",
      "l.views",
      "l.downloads",
      "l.allow_download",
      "l.show_metadata",
      "u.name",
      "u.surname",
      eb
        .selectFrom("share_reviews as r")
        .select(sql<number>`count(*)`.as("n"))
        .whereRef("r.link_id", "=", "l.id")
        .as("reviews"),
    ])
    .where("l.board_id", "=", scope.board.id)
    .orderBy("l.created_at", "desc")
    .orderBy("l.id", "desc")
    .execute();
  return rows.map((r) => ({
    id: r.id,
    recipient: r.recipient,
    label: r.label,
    createdBy: r.name ? `${r.name} ${r.surname ?? ""}`.trim() : null,
    createdAt: Number(r.created_at),
    expiresAt: r.expires_at === null ? null : Number(r.expires_at),
    revokedAt: r.revoked_at === null ? null : Number(r.revoked_at),
    lastOpenedAt: r.last_opened_at === null ? null : Number(r.last_opened_at),
    views: Number(r.views),
    downloads: Number(r.downloads),
    reviews: Number(r.reviews ?? 0),
    allowDownload: r.allow_download === 1,
    showMetadata: r.show_metadata === 1,
  }));
}

async function linkOfBoard(scope: BoardScope, linkId: number) {
  const row = await db()
    .selectFrom("share_links")
    .select(["id", "revoked_at"])
    .where("id", "=", linkId)
    .where("board_id", "=", scope.board.id)
    .executeTakeFirst();
  if (!row) throw new NotFoundError("Link not found");
  return row;
}

/** Revoking stops the link at once: its page, its JSON and its images. */
export async function revokeShareLink(scope: BoardScope, linkId: number) {
  requireEdit(scope);
  await linkOfBoard(scope, linkId);
  await write(async (trx) => {
    await trx.updateTable("share_links").set({ revoked_at: Date.now() }).where("id", "=", linkId).where("revoked_at", "is", null).execute();
    await recordAudit(
      { action: "share.revoked", ...byActor(scope.actor), subject: `board:${scope.board.id}`, detail: { link: linkId } },
      trx,
    );
  });
}

/** Extending gives the link a new expiry from now (a revoked link stays revoked). */
export async function extendShareLink(scope: BoardScope, linkId: number, expiry: ExpiryChoice) {
  requireEdit(scope);
  const link = await linkOfBoard(scope, linkId);
  if (link.revoked_at !== null) throw new InvalidError("A revoked link cannot be extended; create a new one.");
  await write(async (trx) => {
    await trx
      .updateTable("share_links")
      .set({ expires_at: expiresAt(expiry, Date.now()) })
      .where("id", "=", linkId)
      .execute();
    // "never" above all: a link that no longer expires is a decision someone must be able to find.
    await recordAudit(
      { action: "share.extended", ...byActor(scope.actor), subject: `board:${scope.board.id}`, detail: { link: linkId, expiry } },
      trx,
    );
  });
}

export type SharedLookup =
  | { status: "ok"; scope: SharedBoardScope }
  | { status: "invalid" }
  | { status: "gone"; reason: "expired" | "revoked"; contact: { name: string; email: string } | null };

const BOARD_ID = /^[A-Za-z0-9_-]{1,64}$/;
const TOKEN = /^[A-Za-z0-9_-]{20,128}$/;
/** Failed look-ups one client address may make in the rate-limit window before every look-up is refused. */
export const GUESSES_PER_WINDOW = 30;

const linkQuery = (d: DB) =>
  d
    .selectFrom("share_links as l")
    .innerJoin("boards as b", "b.id", "l.board_id")
    .innerJoin("projects as p", "p.id", "b.project_id")
    .leftJoin("users as u", "u.id", "l.created_by")
    .select([
      "l.id",
      "l.token_hash",
      "l.board_id",
      "l.expires_at",
      "l.revoked_at",
      "l.allow_download",
      "l.show_metadata",
      "b.title",
      "b.cover_image_id",
      "b.is_client_board",
      "b.updated_at as board_version",
      "p.id as project_id",
      "p.name as project_name",
      "p.logo_key",
      "p.wsc",
      "p.wsc_source",
      "p.updated_at as project_version",
      "u.name as creator_name",
      "u.surname as creator_surname",
      "u.email as creator_email",
    ])
    .where("l.token_hash", "=", "");
type LinkRow = Awaited<ReturnType<ReturnType<typeof linkQuery>["executeTakeFirstOrThrow"]>>;
let compiledLink: { db: DB; query: ReturnType<ReturnType<typeof linkQuery>["compile"]> } | null = null;

/**
 * A link with its board, project and creator by its token's hash. The statement is built once per connection and run
 * with the hash alone: building it through the query builder cost more than running it (bench P3: every view of a
 * shared page looks its link up).
 */
async function linkByHash(hash: string) {
  const d = db();
  if (compiledLink?.db !== d) compiledLink = { db: d, query: linkQuery(d).compile() };
  return (await d.executeQuery<LinkRow>({ ...compiledLink.query, parameters: [hash] })).rows[0];
}

/**
 * A shared URL (`<board id>:<token>`) as its read-only board scope. Missing, malformed and unknown URLs are
 * "invalid" and cost the same database look-up as a real one (a malformed one looks up a hash nobody has), so the
 * answers cannot be told apart by their timing; expired and revoked links say so, with who to ask. Failed look-ups
 * count against the client address (guessing is rate-limited).
 */
export async function resolveSharedUrl(raw: string | undefined, clientIp: string | null, windowMs: number): Promise<SharedLookup> {
  const text = raw ?? "";
  const at = text.indexOf(":");
  const boardId = at > 0 ? text.slice(0, at) : "";
  const token = at > 0 ? text.slice(at + 1) : "";
  const wellFormed = BOARD_ID.test(boardId) && TOKEN.test(token);
  const hash = sha256(wellFormed ? token : `malformed:${text}`);
  const guessKey = `share-guess:${clientIp ?? "unknown"}`;
  const row = await linkByHash(hash);
  const matches =
    Boolean(row) && timingSafeEqual(Buffer.from(row!.token_hash), Buffer.from(hash)) && row!.board_id === boardId && wellFormed;
  if (!matches || !row) {
    const limited = await hitRateLimit(guessKey, GUESSES_PER_WINDOW, windowMs);
    if (!limited.allowed)
      throw new TooManyRequestsError("Too many attempts. Please wait a few minutes and try again.", limited.retryAfterSeconds);
    return { status: "invalid" };
  }
  const now = Date.now();
  const contact = row.creator_email
    ? { name: `${row.creator_name ?? ""} ${row.creator_surname ?? ""}`.trim(), email: row.creator_email }
    : null;
  if (row.revoked_at !== null) return { status: "gone", reason: "revoked", contact };
  if (row.expires_at !== null && Number(row.expires_at) <= now) return { status: "gone", reason: "expired", contact };
  const allowDownload = row.allow_download === 1;
  return {
    status: "ok",
    scope: {
      kind: "shared",
      link: { id: row.id, allowDownload, showMetadata: row.show_metadata === 1 },
      project: {
        id: row.project_id,
        name: row.project_name,
        logoKey: row.logo_key,
        wsc: row.wsc === 1,
        wscSource: row.wsc_source,
        version: Number(row.project_version),
      },
      board: {
        id: row.board_id,
        title: row.title,
        coverImageId: row.cover_image_id,
        clientBoard: row.is_client_board === 1,
        version: Number(row.board_version),
      },
      can: { edit: false, manage: false, download: allowDownload, select: false },
    },
  };
}

/** How long views wait in memory before they are written, at most (a crash loses at most this much of them). */
export const VIEW_FLUSH_MS = 1000;
const pendingViews = new Map<number, { boardId: string; views: number; firstAt: number; lastAt: number; ip: string | null }>();
let flushTimer: ReturnType<typeof setTimeout> | null = null;

/**
 * A view of the link's page: counted, and the first of each day goes to the audit log. Views are added up in memory
 * and written together within VIEW_FLUSH_MS (one UPDATE per link and second instead of one per view: the page is
 * answered from a cache, and a write per view would cost more than the rest of the answer; bench P3).
 */
export function recordOpen(scope: SharedBoardScope, ip: string | null) {
  const now = Date.now();
  const pending = pendingViews.get(scope.link.id);
  if (pending) {
    pending.views++;
    pending.lastAt = Math.max(pending.lastAt, now);
  } else pendingViews.set(scope.link.id, { boardId: scope.board.id, views: 1, firstAt: now, lastAt: now, ip });
  scheduleFlush();
}

function scheduleFlush() {
  if (flushTimer) return;
  flushTimer = setTimeout(() => {
    flushViews().catch((error: unknown) => log.error("view count failed", { error: getErrorMessage(error) }));
  }, VIEW_FLUSH_MS);
  flushTimer.unref?.();
}

/**
 * Writes the views counted so far (on the timer, before the team reads the counts, and at shutdown). On the common
 * path one UPDATE per link (it was opened today already); the first views of a day claim the day by a conditional
 * UPDATE, so two processes flushing at once still audit once. Views that could not be written wait for the next flush.
 */
export async function flushViews() {
  if (flushTimer) clearTimeout(flushTimer);
  flushTimer = null;
  const batch = [...pendingViews];
  pendingViews.clear();
  for (const [i, [linkId, p]] of batch.entries()) {
    try {
      const today = p.firstAt - (p.firstAt % DAY);
      const count = async (when: (q: ReturnType<typeof viewUpdate>) => ReturnType<typeof viewUpdate>) =>
        Number((await when(viewUpdate(linkId, p.views, p.lastAt)).executeTakeFirst()).numUpdatedRows) > 0;
      if (await count((q) => q.where("last_opened_at", ">=", today))) continue;
      if (await count((q) => q.where((eb) => eb.or([eb("last_opened_at", "is", null), eb("last_opened_at", "<", today)]))))
        await recordAudit({ action: "share.opened", ip: p.ip, subject: `board:${p.boardId}`, detail: { link: linkId } });
      else await count((q) => q);
    } catch (error) {
      for (const [id, views] of batch.slice(i)) {
        const later = pendingViews.get(id);
        if (later) {
          later.views += views.views;
          later.firstAt = Math.min(later.firstAt, views.firstAt);
        } else pendingViews.set(id, views);
      }
      scheduleFlush();
      throw error;
    }
  }
}

const viewUpdate = (linkId: number, views: number, at: number) =>
  db()
    .updateTable("share_links")
    .set((eb) => ({ views: eb("views", "+", views), last_opened_at: at }))
    .where("id", "=", linkId);

export async function recordDownload(scope: SharedBoardScope) {
  await db()
    .updateTable("share_links")
    .set((eb) => ({ downloads: eb("downloads", "+", 1) }))
    .where("id", "=", scope.link.id)
    .execute();
}

/** An image of the shared board, only while it is on the board; anything else is not found. */
export async function sharedImage(scope: SharedBoardScope, rawId: unknown) {
  const id = typeof rawId === "number" ? rawId : Number.parseInt(String(rawId ?? ""), 10);
  const row = Number.isSafeInteger(id)
    ? await db()
        .selectFrom("images as i")
        .innerJoin("board_images as bi", "bi.image_id", "i.id")
        .selectAll("i")
        .where("bi.board_id", "=", scope.board.id)
        .where("i.id", "=", id)
        .where("i.deleted_at", "is", null)
        .executeTakeFirst()
    : undefined;
  if (!row) throw new NotFoundError("Image not found");
  return row;
}

/**
 * The media check of a link: the object is served only if the image is on the link's board now (a thumbnail URL
 * never outlives the image's place on the board, whatever the link), and an original only when the link allows
 * downloads.
 */
export async function findSharedObject(scope: SharedBoardScope, imageId: number, key: string) {
  const image = await sharedImage(scope, imageId).catch(() => null);
  if (!image) return null;
  const object = await objectOf(image, key);
  if (!object) return null;
  if (key === image.storage_key && !scope.link.allowDownload) return null;
  return object;
}

// ——— The review loop ———

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
