import { sql } from "kysely";
import { db } from "~/db/connection.server";
import { randomToken, sha256 } from "~/lib/crypto.server";
import { InvalidError, NotFoundError } from "~/lib/errors";
import { type ExpiryChoice } from "~/lib/schemas";
import { recordedAs } from "./actor";
import { byActor, recordAudit } from "./audit.server";
import { requireEdit, type BoardScope } from "./scope.server";
import { write } from "./write.server";

/**
 * Boards shared through links, one per recipient (so access can be revoked and views counted per person): the team's
 * side — making, listing, revoking and extending links. A link's URL is `/shared-board/<board id>:<token>`: 256
 * random bits, stored only as their SHA-256 (share-access.server.ts looks a visitor's link up by it).
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

/**
 * The board's links, newest first, with who made them, their counts and their reviews. (Views counted by this
 * process but not written yet are not in them: the share page flushes them first, services/share-views.server.ts.)
 */
export async function listShareLinks(scope: BoardScope): Promise<ManagedLink[]> {
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
