import { db, type DB } from "~/db/connection.server";
import { StatementCache } from "~/db/statements.server";
import type { User } from "~/db/schema";
import { randomToken, sha256 } from "~/lib/crypto.server";

export interface SessionPolicy {
  idleMs: number;
  maxMs: number;
}

/** Writes of last_seen_at are coalesced to one a minute per session. */
const TOUCH_EVERY_MS = 60_000;

/** Starts a session and returns its id (256 bits); only the id's hash is stored. */
export async function startSession(
  userId: number,
  policy: SessionPolicy,
  meta: { ip?: string | null; userAgent?: string | null } = {},
  /** Company sign-in: the provider, subject and provider session it came from (a back-channel logout names them). */
  sso: { provider: string; subject: string; sid: string | null } | null = null,
): Promise<string> {
  const id = randomToken(32);
  const now = Date.now();
  await db()
    .insertInto("sessions")
    .values({
      id_hash: sha256(id),
      user_id: userId,
      created_at: now,
      last_seen_at: now,
      expires_at: now + policy.maxMs,
      revoked_at: null,
      ip: meta.ip ?? null,
      user_agent: meta.userAgent?.slice(0, 300) ?? null,
      sso_provider: sso?.provider ?? null,
      sso_subject: sso?.subject ?? null,
      sso_sid: sso?.sid ?? null,
    })
    .execute();
  return id;
}

/** The look-up every signed-in request makes, built once (app/db/statements.server.ts). */
const sessionStatements = new StatementCache();

/** The active user behind a session id, or null when unknown, revoked, idle too long or past its absolute expiry. */
export async function sessionUser(id: string, policy: SessionPolicy, opts: { touch?: boolean } = {}): Promise<User | null> {
  const now = Date.now();
  const [row] = await sessionStatements.rows(
    "user by session",
    [sha256(id), now, now - policy.idleMs],
    (d, hash: string, at: number, seenAfter: number) =>
      d
        .selectFrom("sessions")
        .innerJoin("users", "users.id", "sessions.user_id")
        .selectAll("users")
        .select(["sessions.id_hash", "sessions.last_seen_at"])
        .where("sessions.id_hash", "=", hash)
        .where("sessions.revoked_at", "is", null)
        .where("sessions.expires_at", ">", at)
        .where("sessions.last_seen_at", ">", seenAfter)
        .where("users.status", "=", "active"),
  );
  if (!row) return null;
  if (opts.touch !== false && now - row.last_seen_at > TOUCH_EVERY_MS) {
    await db().updateTable("sessions").set({ last_seen_at: now }).where("id_hash", "=", row.id_hash).execute();
  }
  const { id_hash: _h, last_seen_at: _l, ...user } = row;
  return user;
}

export async function revokeSession(id: string) {
  await db()
    .updateTable("sessions")
    .set({ revoked_at: Date.now() })
    .where("id_hash", "=", sha256(id))
    .where("revoked_at", "is", null)
    .execute();
}

/**
 * Ends every session of a user at once (disabled by an admin, a new password), or every one but `except` (the
 * current one). In `executor`'s transaction when given, so it commits with the change that calls for it.
 * Returns how many ended.
 */
export async function revokeUserSessions(
  userId: number,
  opts: { except?: string | null } = {},
  executor: Pick<DB, "updateTable"> = db(),
): Promise<number> {
  let q = executor.updateTable("sessions").set({ revoked_at: Date.now() }).where("user_id", "=", userId).where("revoked_at", "is", null);
  if (opts.except) q = q.where("id_hash", "!=", sha256(opts.except));
  return Number((await q.executeTakeFirst()).numUpdatedRows);
}

/** A session as its owner sees it listed: `key` is a prefix of the id's hash (never the id). */
export interface SessionRow {
  key: string;
  current: boolean;
  createdAt: number;
  lastSeenAt: number;
  ip: string | null;
  userAgent: string | null;
}

/** A user's sessions still in use, the current one first. */
export async function liveSessions(userId: number, currentSessionId: string | null, policy: SessionPolicy): Promise<SessionRow[]> {
  const now = Date.now();
  const current = currentSessionId ? sha256(currentSessionId) : null;
  const rows = await db()
    .selectFrom("sessions")
    .select(["id_hash", "created_at", "last_seen_at", "ip", "user_agent"])
    .where("user_id", "=", userId)
    .where("revoked_at", "is", null)
    .where("expires_at", ">", now)
    .where("last_seen_at", ">", now - policy.idleMs)
    .orderBy("last_seen_at", "desc")
    .limit(100)
    .execute();
  return rows
    .map((r) => ({
      key: r.id_hash.slice(0, 12),
      current: r.id_hash === current,
      createdAt: Number(r.created_at),
      lastSeenAt: Number(r.last_seen_at),
      ip: r.ip,
      userAgent: r.user_agent,
    }))
    .sort((a, b) => Number(b.current) - Number(a.current));
}

/** Housekeeping: drops sessions that can no longer be used. */
export async function pruneSessions(policy: SessionPolicy) {
  const now = Date.now();
  await db()
    .deleteFrom("sessions")
    .where((eb) => eb.or([eb("expires_at", "<=", now), eb("last_seen_at", "<=", now - policy.idleMs), eb("revoked_at", "is not", null)]))
    .execute();
}
