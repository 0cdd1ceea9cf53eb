import { db, dialect } from "~/db/connection.server";
import { StatementCache } from "~/db/statements.server";
import { randomToken, sha256 } from "~/lib/crypto.server";
import { ConflictError, InvalidError, NotFoundError } from "~/lib/errors";
import { requireAdmin, type Actor, type Grant } from "./actor";
import { byActor, recordAudit } from "./audit.server";
import { visibleProjectIds } from "./scope.server";
import { write, type Trx } from "./write.server";

/**
 * Personal access tokens (the public API's only credential). The secret is shown once, when made, and kept as its
 * SHA-256: it is 256 random bits, so a fast hash is as safe as a slow one and costs nothing per request. Its prefix
 * lets secret scanners (and people) recognise a leaked one.
 */
export const TOKEN_PREFIX = "koala_pat_";
export const TOKEN_NAME_MAX = 60;
const DAY_MS = 86_400_000;
/** Last use is written at most this often per token: a script's every call must not be a write. */
const TOUCH_EVERY_MS = 60_000;
/** Working tokens one person may hold: each has its own rate limit, so without a cap "per token" would bound no one. */
export const MAX_WORKING_TOKENS = 50;
export const TOO_MANY_TOKENS = `You have ${MAX_WORKING_TOKENS} working tokens. Revoke one you no longer use to make another.`;

export interface NewToken {
  name: string;
  write: boolean;
  /** null: all of the owner's projects, now and later. */
  projects: number[] | null;
  days: number;
}

export interface TokenRow {
  id: number;
  name: string;
  write: boolean;
  projects: { id: number; name: string }[] | null;
  createdAt: number;
  expiresAt: number;
  lastUsedAt: number | null;
  lastUsedIp: string | null;
  revokedAt: number | null;
}

const parseProjects = (raw: string | null): number[] | null => (raw === null ? null : (JSON.parse(raw) as number[]));

/** Makes a token for the actor; returns its secret (never stored, never shown again). */
export async function createToken(actor: Actor, input: NewToken, at = Date.now()): Promise<{ id: number; secret: string }> {
  if (actor.grant) throw new NotFoundError("Page not found");
  let projects: number[] | null = null;
  if (input.projects) {
    const wanted = [...new Set(input.projects)];
    // Only projects the owner is in: an id outside their reach is refused like an unknown one.
    const mine = await db()
      .selectFrom("projects")
      .select("id")
      .where("id", "in", wanted)
      .where("id", "in", visibleProjectIds(actor))
      .execute();
    if (!wanted.length || mine.length !== wanted.length) throw new InvalidError("Choose projects you are a member of.");
    projects = wanted.sort((a, b) => a - b);
  }
  const secret = TOKEN_PREFIX + randomToken(32);
  const id = await write(async (trx) => {
    // PostgreSQL: one person's tokens are made one at a time, so two at once cannot both pass the cap (SQLite's
    // writers are one at a time already).
    if (dialect() === "postgres") await trx.selectFrom("users").select("id").where("id", "=", actor.id).forUpdate().execute();
    const working = await trx
      .selectFrom("api_tokens")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("user_id", "=", actor.id)
      .where("revoked_at", "is", null)
      .where("expires_at", ">", at)
      .executeTakeFirstOrThrow();
    if (Number(working.n) >= MAX_WORKING_TOKENS) throw new ConflictError(TOO_MANY_TOKENS);
    const row = await trx
      .insertInto("api_tokens")
      .values({
        user_id: actor.id,
        name: input.name.trim(),
        token_hash: sha256(secret),
        can_write: input.write ? 1 : 0,
        projects: projects ? JSON.stringify(projects) : null,
        expires_at: at + input.days * DAY_MS,
        created_at: at,
      })
      .returning("id")
      .executeTakeFirstOrThrow();
    await recordAudit(
      { action: "api_token.created", ...byActor(actor), subject: `api_token:${row.id}`, detail: { write: input.write, days: input.days } },
      trx,
    );
    return Number(row.id);
  });
  return { id, secret };
}

async function tokenRows(where: { userId?: number }, namesFor: Actor) {
  let q = db()
    .selectFrom("api_tokens as t")
    .innerJoin("users as u", "u.id", "t.user_id")
    .select([
      "t.id",
      "t.name",
      "t.can_write",
      "t.projects",
      "t.created_at",
      "t.expires_at",
      "t.last_used_at",
      "t.last_used_ip",
      "t.revoked_at",
      "u.email",
    ])
    .orderBy("t.created_at", "desc")
    .orderBy("t.id", "desc");
  if (where.userId !== undefined) q = q.where("t.user_id", "=", where.userId);
  const rows = await q.execute();
  const ids = [...new Set(rows.flatMap((r) => parseProjects(r.projects) ?? []))];
  // Only the names of projects the reader may see: a project the owner left is not named to them any more.
  const named = ids.length
    ? await db()
        .selectFrom("projects")
        .select(["id", "name"])
        .where("id", "in", ids)
        .where("id", "in", visibleProjectIds(namesFor))
        .execute()
    : [];
  const names = new Map(named.map((p) => [p.id, p.name]));
  return rows.map((r) => ({
    id: Number(r.id),
    name: r.name,
    email: r.email,
    write: r.can_write === 1,
    projects: parseProjects(r.projects)?.map((id) => ({ id, name: names.get(id) ?? "a project you are no longer in" })) ?? null,
    createdAt: Number(r.created_at),
    expiresAt: Number(r.expires_at),
    lastUsedAt: r.last_used_at === null ? null : Number(r.last_used_at),
    lastUsedIp: r.last_used_ip,
    revokedAt: r.revoked_at === null ? null : Number(r.revoked_at),
  }));
}

/** The actor's own tokens, newest first (revoked and expired ones too, so the profile shows what happened). */
export async function myTokens(actor: Actor): Promise<TokenRow[]> {
  return tokenRows({ userId: actor.id }, actor);
}

/** Everyone's tokens, for the admin console. */
export async function allTokens(actor: Actor): Promise<(TokenRow & { email: string })[]> {
  requireAdmin(actor);
  return tokenRows({}, actor);
}

/**
 * Revokes a token: the owner's own (`mine`), or anyone's by an admin. A token of someone else is not found for
 * its owner's peers. Revoking a revoked token changes nothing and says so by returning false.
 */
export async function revokeToken(actor: Actor, tokenId: number, at = Date.now()): Promise<boolean> {
  if (actor.grant) throw new NotFoundError("Page not found");
  return write(async (trx) => {
    let q = trx.updateTable("api_tokens").set({ revoked_at: at }).where("id", "=", tokenId).where("revoked_at", "is", null);
    if (actor.role !== "admin") q = q.where("user_id", "=", actor.id);
    const { numUpdatedRows } = await q.executeTakeFirst();
    if (!numUpdatedRows) {
      let known = trx.selectFrom("api_tokens").select("id").where("id", "=", tokenId);
      if (actor.role !== "admin") known = known.where("user_id", "=", actor.id);
      if (!(await known.executeTakeFirst())) throw new NotFoundError("Token not found");
      return false;
    }
    await recordAudit({ action: "api_token.revoked", ...byActor(actor), subject: `api_token:${tokenId}` }, trx);
    return true;
  });
}

/** Every token of a person still working, revoked (their account was disabled), in the caller's transaction. */
export async function revokeUserTokens(userId: number, trx: Trx, at = Date.now()) {
  await trx.updateTable("api_tokens").set({ revoked_at: at }).where("user_id", "=", userId).where("revoked_at", "is", null).execute();
}

/** The tokens that still work at `at`: not revoked, not expired, their owner active; joined with the owner. */
const workingTokens = (at: number) =>
  db()
    .selectFrom("api_tokens as t")
    .innerJoin("users as u", "u.id", "t.user_id")
    .where("t.revoked_at", "is", null)
    .where("t.expires_at", ">", at)
    .where("u.status", "=", "active");

/** The look-up every API request makes, built once (app/db/statements.server.ts). */
const tokenStatements = new StatementCache();

const grantOf = (row: { id: number; can_write: number; projects: string | null }): Grant => ({
  tokenId: Number(row.id),
  write: row.can_write === 1,
  projects: parseProjects(row.projects),
});

/**
 * The actor a token's secret stands for: its active owner, narrowed by the token's grant; null for an unknown,
 * revoked or expired token, or an owner who is no longer active. One indexed read; the last use written at most
 * once a minute (or when the address changes).
 */
export async function tokenActor(secret: string, ip: string | null, at = Date.now()): Promise<Actor | null> {
  if (!secret.startsWith(TOKEN_PREFIX) || secret.length > 200) return null;
  const [row] = await tokenStatements.rows("token by hash", [at, sha256(secret)], (_d, when: number, hash: string) =>
    workingTokens(when)
      .select(["t.id", "t.can_write", "t.projects", "t.last_used_at", "t.last_used_ip", "u.id as user_id", "u.role"])
      .where("t.token_hash", "=", hash),
  );
  if (!row) return null;
  if (row.last_used_at === null || at - Number(row.last_used_at) > TOUCH_EVERY_MS || row.last_used_ip !== ip)
    await db().updateTable("api_tokens").set({ last_used_at: at, last_used_ip: ip }).where("id", "=", row.id).execute();
  return { id: row.user_id, role: row.role, ip, grant: grantOf(row) };
}

/**
 * A job's token's grant as it is now (the job runs narrowed by it, as its requests were); null once the token no
 * longer works: revoked, expired, or its owner no longer active.
 */
export async function tokenGrant(tokenId: number, userId: number, at = Date.now()): Promise<Grant | null> {
  const row = await workingTokens(at)
    .select(["t.id", "t.can_write", "t.projects"])
    .where("t.id", "=", tokenId)
    .where("t.user_id", "=", userId)
    .executeTakeFirst();
  return row ? grantOf(row) : null;
}
