import { db } from "~/db/connection.server";
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
    })
    .execute();
  return id;
}

/** The active user behind a session id, or null when unknown, revoked, idle too long or past its absolute expiry. */
export async function sessionUser(id: string, policy: SessionPolicy, opts: { touch?: boolean } = {}): Promise<User | null> {
  const now = Date.now();
  const row = await db()
    .selectFrom("sessions")
    .innerJoin("users", "users.id", "sessions.user_id")
    .selectAll("users")
    .select(["sessions.id_hash", "sessions.last_seen_at"])
    .where("sessions.id_hash", "=", sha256(id))
    .where("sessions.revoked_at", "is", null)
    .where("sessions.expires_at", ">", now)
    .where("sessions.last_seen_at", ">", now - policy.idleMs)
    .where("users.status", "=", "active")
    .executeTakeFirst();
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

export async function revokeUserSessions(userId: number) {
  await db()
    .updateTable("sessions")
    .set({ revoked_at: Date.now() })
    .where("user_id", "=", userId)
    .where("revoked_at", "is", null)
    .execute();
}

/** Housekeeping: drops sessions that can no longer be used. */
export async function pruneSessions(policy: SessionPolicy) {
  const now = Date.now();
  await db()
    .deleteFrom("sessions")
    .where((eb) => eb.or([eb("expires_at", "<=", now), eb("last_seen_at", "<=", now - policy.idleMs), eb("revoked_at", "is not", null)]))
    .execute();
}
