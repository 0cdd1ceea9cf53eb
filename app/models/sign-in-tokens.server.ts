import { db } from "~/db/connection.server";
import { randomToken, sha256 } from "~/lib/crypto.server";

export const MAGIC_LINK_TTL_MS = 10 * 60_000;
export const TOTP_CHALLENGE_TTL_MS = 5 * 60_000;
/** The link an approval or an admin e-mails: the person may read it hours later. */
export const WELCOME_LINK_TTL_MS = 72 * 3_600_000;

type Purpose = "magic_link" | "totp_challenge";

/** A company sign-in's session details, carried through the TOTP challenge to the session it starts. */
export interface SsoRef {
  provider: string;
  subject: string;
  sid: string | null;
}

async function issue(userId: number, purpose: Purpose, ttlMs: number, redirectTo: string | null, sso: SsoRef | null = null) {
  const token = randomToken(32);
  const now = Date.now();
  await db()
    .transaction()
    .execute(async (trx) => {
      // A newer token voids every older unused one of the same purpose.
      await trx
        .updateTable("sign_in_tokens")
        .set({ used_at: now })
        .where("user_id", "=", userId)
        .where("purpose", "=", purpose)
        .where("used_at", "is", null)
        .execute();
      await trx
        .insertInto("sign_in_tokens")
        .values({
          user_id: userId,
          purpose,
          token_hash: sha256(token),
          redirect_to: redirectTo,
          created_at: now,
          expires_at: now + ttlMs,
          used_at: null,
          sso: sso ? JSON.stringify(sso) : null,
        })
        .execute();
    });
  return token;
}

export const issueMagicLink = (userId: number, redirectTo: string | null, ttlMs = MAGIC_LINK_TTL_MS) =>
  issue(userId, "magic_link", ttlMs, redirectTo);
export const issueTotpChallenge = (userId: number, redirectTo: string | null, sso: SsoRef | null = null) =>
  issue(userId, "totp_challenge", TOTP_CHALLENGE_TTL_MS, redirectTo, sso);

export interface ConsumedToken {
  userId: number;
  redirectTo: string | null;
  sso: SsoRef | null;
}
const consumed = (row: { user_id: number; redirect_to: string | null; sso: string | null }): ConsumedToken => ({
  userId: row.user_id,
  redirectTo: row.redirect_to,
  sso: row.sso ? (JSON.parse(row.sso) as SsoRef) : null,
});

/** Uses a token once: the UPDATE only matches an unused, unexpired token, so two racing requests cannot both win. */
export async function consumeToken(token: string, purpose: Purpose): Promise<ConsumedToken | null> {
  if (!token || token.length > 200) return null;
  const now = Date.now();
  const hash = sha256(token);
  const res = await db()
    .updateTable("sign_in_tokens")
    .set({ used_at: now })
    .where("token_hash", "=", hash)
    .where("purpose", "=", purpose)
    .where("used_at", "is", null)
    .where("expires_at", ">", now)
    .executeTakeFirst();
  if (Number(res.numUpdatedRows) !== 1) return null;
  const row = await db()
    .selectFrom("sign_in_tokens")
    .select(["user_id", "redirect_to", "sso"])
    .where("token_hash", "=", hash)
    .executeTakeFirstOrThrow();
  return consumed(row);
}

/** Reads a live token without using it (the TOTP challenge stays valid while the person retypes a code). */
export async function peekToken(token: string, purpose: Purpose): Promise<ConsumedToken | null> {
  if (!token || token.length > 200) return null;
  const row = await db()
    .selectFrom("sign_in_tokens")
    .select(["user_id", "redirect_to", "sso"])
    .where("token_hash", "=", sha256(token))
    .where("purpose", "=", purpose)
    .where("used_at", "is", null)
    .where("expires_at", ">", Date.now())
    .executeTakeFirst();
  return row ? consumed(row) : null;
}

export async function pruneSignInTokens() {
  await db()
    .deleteFrom("sign_in_tokens")
    .where("expires_at", "<", Date.now() - 86_400_000)
    .execute();
}
