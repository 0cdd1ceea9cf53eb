import { timingSafeEqual } from "node:crypto";
import { db, type DB } from "~/db/connection.server";
import { StatementCache } from "~/db/statements.server";
import { sha256 } from "~/lib/crypto.server";
import { NotFoundError, TooManyRequestsError } from "~/lib/errors";
import { recordAudit } from "./audit.server";
import { objectOf } from "./images.server";
import { hitRateLimit } from "./rate-limits.server";
import { boardRef, type SharedBoardScope } from "./scope.server";
import { write } from "./write.server";

/**
 * A share link's visitor: the link resolved (in constant time, guesses rate-limited) into a read-only
 * `SharedBoardScope` on one board (app/models/scope.server.ts), never a session; what that scope may read (an image
 * on the board now, its objects, an original only where the link allows downloads); and the link's counts.
 */

const DAY = 86_400_000;

export type SharedLookup =
  | { status: "ok"; scope: SharedBoardScope }
  | { status: "invalid" }
  | { status: "gone"; reason: "expired" | "revoked"; contact: { name: string; email: string } | null };

const BOARD_ID = /^[A-Za-z0-9_-]{1,64}$/;
const TOKEN = /^[A-Za-z0-9_-]{20,128}$/;
/** Failed look-ups one client address may make in the rate-limit window before every look-up is refused. */
export const GUESSES_PER_WINDOW = 30;

const linkStatement = new StatementCache();

/**
 * A link with its board, project and creator by its token's hash, by a statement built once (every view of a shared
 * page looks its link up: bench P3).
 */
async function linkByHash(hash: string) {
  const rows = await linkStatement.rows("link by hash", [hash], (d, tokenHash: string) =>
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
        "p.keep_gps",
        "p.updated_at as project_version",
        "u.name as creator_name",
        "u.surname as creator_surname",
        "u.email as creator_email",
      ])
      .where("l.token_hash", "=", tokenHash),
  );
  return rows[0];
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
        keepGps: row.keep_gps === 1,
        version: Number(row.project_version),
      },
      board: boardRef(row),
      can: { edit: false, manage: false, download: allowDownload, select: false },
    },
  };
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

/**
 * Adds views to a link's count (share-views.server.ts batches them). The first views of a day claim the day by a
 * conditional UPDATE, so two processes writing at once still audit the day's first open once.
 */
export async function countLinkViews(
  link: { id: number; boardId: string },
  views: number,
  lastAt: number,
  firstAt: number,
  ip: string | null,
) {
  const today = firstAt - (firstAt % DAY);
  // One transaction: the day's first view and its audit entry commit together (a reader never sees one alone).
  await write(async (trx) => {
    const count = async (when: (q: ReturnType<typeof viewUpdate>) => ReturnType<typeof viewUpdate>) =>
      Number((await when(viewUpdate(trx, link.id, views, lastAt)).executeTakeFirst()).numUpdatedRows) > 0;
    if (await count((q) => q.where("last_opened_at", ">=", today))) return;
    if (await count((q) => q.where((eb) => eb.or([eb("last_opened_at", "is", null), eb("last_opened_at", "<", today)]))))
      await recordAudit({ action: "share.opened", ip, subject: `board:${link.boardId}`, detail: { link: link.id } }, trx);
    else await count((q) => q);
  });
}

const viewUpdate = (executor: Pick<DB, "updateTable">, linkId: number, views: number, at: number) =>
  executor
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
