import { sql } from "kysely";
import { db } from "~/db/connection.server";
import type { MemberRole } from "~/lib/account-schemas";
import { InvalidError, NotFoundError } from "~/lib/errors";
import { requireAdmin, type Actor } from "./actor";
import { byActor, recordAudit } from "./audit.server";
import { revokeUserSessions } from "./sessions.server";
import { revokeUserTokens } from "./api-tokens.server";
import { toPublicUser } from "./users.server";
import { write } from "./write.server";

/** The admin console's users: search, memberships, roles, status, TOTP. Every function checks the admin role first. */
export const USERS_PAGE = 50;

const userColumns = ["id", "email", "name", "surname", "role", "status", "terms_acknowledged_at", "totp_secret"] as const;

/** Users whose e-mail, name or surname holds `q` (any case), newest first, keyset-paged on id. */
export async function searchUsers(actor: Actor, q: string, before?: number) {
  requireAdmin(actor);
  const needle = `%${q
    .trim()
    .toLowerCase()
    .replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  let query = db()
    .selectFrom("users")
    .select(userColumns)
    .orderBy("id", "desc")
    .limit(USERS_PAGE + 1);
  if (q.trim())
    query = query.where((eb) =>
      eb.or(["email", "name", "surname"].map((c) => eb(sql`lower(${sql.ref(c)})`, "like", sql<string>`${needle} escape '\\'`))),
    );
  if (before) query = query.where("id", "<", before);
  const rows = await query.execute();
  return { rows: rows.slice(0, USERS_PAGE).map(toPublicUser), next: rows.length > USERS_PAGE ? rows[USERS_PAGE - 1]!.id : null };
}

/** A user with their memberships (every project, by name). */
export async function userDetail(actor: Actor, id: number) {
  requireAdmin(actor);
  const user = await db().selectFrom("users").select(userColumns).where("id", "=", id).executeTakeFirst();
  if (!user) throw new NotFoundError("User not found");
  const memberships = await db()
    .selectFrom("project_members as m")
    .innerJoin("projects as p", "p.id", "m.project_id")
    .select(["p.id as projectId", "p.name as projectName", "m.role"])
    .where("m.user_id", "=", id)
    .orderBy("p.name")
    .execute();
  return { user: toPublicUser(user), memberships };
}

async function requireUserRow(id: number) {
  const user = await db().selectFrom("users").select(["id", "email", "name", "status", "role"]).where("id", "=", id).executeTakeFirst();
  if (!user) throw new NotFoundError("User not found");
  return user;
}

/** Adds, changes (a role) or removes (null) a user's membership of a project. */
export async function setMembership(actor: Actor, userId: number, projectId: number, role: MemberRole | null) {
  requireAdmin(actor);
  await requireUserRow(userId);
  await write(async (trx) => {
    const project = await trx.selectFrom("projects").select("id").where("id", "=", projectId).executeTakeFirst();
    if (!project) throw new NotFoundError("Project not found");
    if (role === null) await trx.deleteFrom("project_members").where("project_id", "=", projectId).where("user_id", "=", userId).execute();
    else
      await trx
        .insertInto("project_members")
        .values({ project_id: projectId, user_id: userId, role, created_at: Date.now() })
        // Set by hand from now on: a company provider's groups no longer change it (models/sso.server.ts).
        .onConflict((oc) => oc.columns(["project_id", "user_id"]).doUpdateSet({ role, sso_provider: null }))
        .execute();
    await recordAudit(
      { action: "user.membership_changed", ...byActor(actor), subject: `user:${userId}`, detail: { project: projectId, role } },
      trx,
    );
  });
}

/** The global role. An admin cannot take it from themselves (the console would lock its last door behind them). */
export async function setUserRole(actor: Actor, userId: number, role: "user" | "admin") {
  requireAdmin(actor);
  await requireUserRow(userId);
  if (userId === actor.id && role !== "admin") throw new InvalidError("You cannot take the admin role from yourself.");
  await write(async (trx) => {
    await trx.updateTable("users").set({ role, updated_at: Date.now() }).where("id", "=", userId).execute();
    await recordAudit({ action: "user.role_changed", ...byActor(actor), subject: `user:${userId}`, detail: { role } }, trx);
  });
}

/**
 * Disables (every session and API token revoked in the same transaction, so open pages and scripts stop at once;
 * enabling again brings neither back) or enables an account.
 */
export async function setUserStatus(actor: Actor, userId: number, status: "active" | "disabled") {
  requireAdmin(actor);
  await requireUserRow(userId);
  if (userId === actor.id) throw new InvalidError("You cannot disable your own account.");
  await write(async (trx) => {
    const now = Date.now();
    await trx.updateTable("users").set({ status, updated_at: now }).where("id", "=", userId).execute();
    if (status === "disabled") {
      await revokeUserSessions(userId, {}, trx);
      await revokeUserTokens(userId, trx, now);
    }
    await recordAudit(
      { action: status === "disabled" ? "user.disabled" : "user.enabled", ...byActor(actor), subject: `user:${userId}` },
      trx,
    );
  });
}

/** Removes a user's TOTP (a lost phone): the next sign-in by link needs no code until they enrol again. */
export async function resetUserTotp(actor: Actor, userId: number) {
  requireAdmin(actor);
  await requireUserRow(userId);
  await write(async (trx) => {
    await trx
      .updateTable("users")
      .set({ totp_secret: null, totp_pending_secret: null, totp_last_step: null, updated_at: Date.now() })
      .where("id", "=", userId)
      .execute();
    await recordAudit({ action: "user.totp_reset", ...byActor(actor), subject: `user:${userId}` }, trx);
  });
}

/** The user an admin sends a sign-in link to: active accounts only. */
export async function linkRecipient(actor: Actor, userId: number) {
  requireAdmin(actor);
  const user = await requireUserRow(userId);
  if (user.status !== "active") throw new InvalidError("Only an active account can be sent a sign-in link.");
  return user;
}

/** Admins who get the daily digest of applications. */
export async function activeAdmins() {
  return db().selectFrom("users").select(["id", "email", "name"]).where("role", "=", "admin").where("status", "=", "active").execute();
}
