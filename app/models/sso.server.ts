import type { NewUsers } from "~/config.server";
import { db } from "~/db/connection.server";
import type { User } from "~/db/schema";
import { MEMBER_ROLES, type MemberRole } from "~/lib/account-schemas";
import { sha256 } from "~/lib/crypto.server";
import { ConflictError, NotFoundError } from "~/lib/errors";
import { recordedAs, requireAdmin, type Actor } from "./actor";
import { byActor, recordAudit } from "./audit.server";
import { normaliseEmail } from "./users.server";
import { isUniqueViolation, write, type Trx } from "./write.server";

/**
 * Company sign-in's records (decision 0025): a provider's subjects and the accounts they sign in to, the groups that
 * give roles in projects (the admin console's table), the values a provider sends once, and the sessions a
 * back-channel logout ends. The protocol itself is services/oidc.server.ts.
 */

/** What a provider said about the person, once its token has been checked. */
export interface ProviderPerson {
  provider: string;
  issuer: string;
  subject: string;
  email: string;
  name: string | null;
  surname: string | null;
  /** The groups claim; null when the provider sent none (then no role is changed, and no account is made). */
  groups: string[] | null;
}

/** A change of role in a project that a sign-in made from the person's groups (null: no membership). */
export interface RoleChange {
  projectId: number;
  from: MemberRole | null;
  to: MemberRole | null;
}

export type Admission =
  | { admitted: true; user: User; created: boolean; changes: RoleChange[]; projects: number }
  | {
      admitted: false;
      reason: "disabled" | "pending" | "no_account" | "apply" | "no_group" | "groups_missing" | "other_subject";
      userId: number | null;
    };

const rank = (role: MemberRole) => MEMBER_ROLES.indexOf(role);

/**
 * Lets a person in from a provider (decision 0025), in one transaction: finds the account (by this provider's
 * subject at its issuer, else by the address, which links the two), makes one on a first sign-in when `newUsers`
 * allows and a group gives a project, takes the name from the provider, and sets the roles the provider's groups give
 * in the projects its groups are mapped to: the best role among the person's groups, none when no group of theirs
 * gives one. It only changes memberships its groups gave: one an admin gave by hand stays as it is. A refusal before
 * the account exists creates nothing. Two first sign-ins at once: the second finds the first's account (a retry).
 */
export async function admitPerson(person: ProviderPerson, newUsers: NewUsers, at = Date.now()): Promise<Admission> {
  try {
    return await admitOnce(person, newUsers, at);
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    return admitOnce(person, newUsers, at);
  }
}

async function admitOnce(person: ProviderPerson, newUsers: NewUsers, at: number): Promise<Admission> {
  const email = normaliseEmail(person.email);
  const link = { provider: person.provider, issuer: person.issuer };
  return write(async (trx) => {
    const linked = await trx
      .selectFrom("sso_identities as i")
      .innerJoin("users as u", "u.id", "i.user_id")
      .selectAll("u")
      .where("i.provider", "=", link.provider)
      .where("i.issuer", "=", link.issuer)
      .where("i.subject", "=", person.subject)
      .executeTakeFirst();
    let user: User | undefined = linked ?? (await trx.selectFrom("users").selectAll().where("email", "=", email).executeTakeFirst());
    if (user && !linked) {
      // An address this provider already linked to another of its subjects: the address was given to someone else.
      // The subject's own link is not "another": under READ COMMITTED a concurrent first sign-in of this person may
      // commit it between the statements above and this one.
      const other = await trx
        .selectFrom("sso_identities")
        .select("subject")
        .where("provider", "=", link.provider)
        .where("issuer", "=", link.issuer)
        .where("user_id", "=", user.id)
        .where("subject", "<>", person.subject)
        .executeTakeFirst();
      if (other) return { admitted: false, reason: "other_subject", userId: user.id };
    }
    if (user?.status === "disabled") return { admitted: false, reason: "disabled", userId: user.id };
    if (user?.status === "pending") return { admitted: false, reason: "pending", userId: user.id };

    const mapped = await mappingsOf(trx, person.provider);
    const wanted = rolesFor(mapped, person.groups ?? []);

    let created = false;
    if (!user) {
      if (newUsers === "refuse") return { admitted: false, reason: "no_account", userId: null };
      // The registration queue: the person applies (the form prefilled), an admin decides, and the next company
      // sign-in links the account the approval made.
      if (newUsers === "register") return { admitted: false, reason: "apply", userId: null };
      if (person.groups === null) return { admitted: false, reason: "groups_missing", userId: null };
      if (!wanted.size) return { admitted: false, reason: "no_group", userId: null };
      user = await trx
        .insertInto("users")
        .values({
          email,
          name: person.name ?? email.split("@")[0]!,
          surname: person.surname ?? "",
          status: "active",
          role: "user",
          created_at: at,
          updated_at: at,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      created = true;
      await recordAudit(
        { action: "sso.account_created", actorUserId: user.id, subject: `user:${user.id}`, detail: { provider: person.provider } },
        trx,
      );
    } else if ((person.name && person.name !== user.name) || (person.surname !== null && person.surname !== user.surname)) {
      user = await trx
        .updateTable("users")
        .set({ name: person.name ?? user.name, surname: person.surname ?? user.surname, updated_at: at })
        .where("id", "=", user.id)
        .returningAll()
        .executeTakeFirstOrThrow();
    }
    const userId = user.id;

    const groups = person.groups === null ? null : JSON.stringify(person.groups);
    await trx
      .insertInto("sso_identities")
      .values({ ...link, subject: person.subject, user_id: userId, groups, created_at: at, last_sign_in_at: at })
      .onConflict((oc) =>
        oc
          .columns(["provider", "issuer", "subject"])
          .doUpdateSet(groups === null ? { last_sign_in_at: at } : { last_sign_in_at: at, groups }),
      )
      .execute();

    // No groups claim: the roles stay as they were (a provider's hiccup must not take everyone's projects away).
    const changes =
      person.groups === null ? [] : await syncRoles(trx, { provider: person.provider, userId, wanted, mapped, at, actorUserId: userId });
    const { n } = await trx
      .selectFrom("project_members")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("user_id", "=", userId)
      .executeTakeFirstOrThrow();
    return { admitted: true, user, created, changes, projects: Number(n) };
  }, at);
}

/** A provider's table of groups and roles. */
const mappingsOf = (trx: Trx, provider: string) =>
  trx.selectFrom("sso_group_roles").select(["group_name", "project_id", "role"]).where("provider", "=", provider).execute();
type Mapping = Awaited<ReturnType<typeof mappingsOf>>[number];

/** The best role each project's mapped groups give someone in `groups`. */
function rolesFor(mapped: Mapping[], groups: string[]): Map<number, MemberRole> {
  const mine = new Set(groups);
  const wanted = new Map<number, MemberRole>();
  for (const m of mapped) {
    if (!mine.has(m.group_name)) continue;
    const held = wanted.get(m.project_id);
    if (!held || rank(m.role) > rank(held)) wanted.set(m.project_id, m.role);
  }
  return wanted;
}

/**
 * Sets a person's memberships to what a provider's groups give (`wanted`), in the projects the provider's table
 * names and in those where its groups gave a membership before (a project whose last group was unmapped loses them).
 * Only memberships the provider's groups gave are changed: one given by hand stays as it is. Each change is audited.
 */
async function syncRoles(
  trx: Trx,
  o: { provider: string; userId: number; wanted: Map<number, MemberRole>; mapped: Mapping[]; at: number; actorUserId: number | null },
): Promise<RoleChange[]> {
  const mine = await trx
    .selectFrom("project_members")
    .select(["project_id", "role", "sso_provider"])
    .where("user_id", "=", o.userId)
    .execute();
  const before = new Map(mine.map((h) => [h.project_id, h]));
  const governed = new Set([
    ...o.mapped.map((m) => m.project_id),
    ...mine.filter((h) => h.sso_provider === o.provider).map((h) => h.project_id),
  ]);
  const changes: RoleChange[] = [];
  for (const projectId of governed) {
    const row = before.get(projectId);
    // Given by hand (or by another provider's groups): not this provider's to change.
    if (row && row.sso_provider !== o.provider) continue;
    const from = row?.role ?? null;
    const to = o.wanted.get(projectId) ?? null;
    if (from === to) continue;
    if (to === null) await trx.deleteFrom("project_members").where("project_id", "=", projectId).where("user_id", "=", o.userId).execute();
    else
      await trx
        .insertInto("project_members")
        .values({ project_id: projectId, user_id: o.userId, role: to, created_at: o.at, sso_provider: o.provider })
        .onConflict((oc) => oc.columns(["project_id", "user_id"]).doUpdateSet({ role: to }))
        .execute();
    changes.push({ projectId, from, to });
    await recordAudit(
      {
        action: "sso.role_changed",
        actorUserId: o.actorUserId,
        subject: `user:${o.userId}`,
        detail: { provider: o.provider, project: projectId, from, to },
      },
      trx,
    );
  }
  return changes;
}

/**
 * After the table of groups changed: everyone the provider signed in gets the roles their last-known groups give now,
 * without waiting for their next sign-in (a group unmapped takes its access away at once). Returns how many changed.
 */
async function reapplyGroups(trx: Trx, provider: string, actor: Actor): Promise<number> {
  const mapped = await mappingsOf(trx, provider);
  const people = await trx
    .selectFrom("sso_identities")
    .select(["user_id", "groups"])
    .where("provider", "=", provider)
    .where("groups", "is not", null)
    .execute();
  let changed = 0;
  for (const person of people) {
    const wanted = rolesFor(mapped, JSON.parse(person.groups!) as string[]);
    const made = await syncRoles(trx, { provider, userId: person.user_id, wanted, mapped, at: Date.now(), actorUserId: recordedAs(actor) });
    changed += made.length;
  }
  return changed;
}

/**
 * Records a value a provider sends once (a sign-in's `state`, a logout token's `jti`) until `expiresAt`; false when
 * it was already recorded: a replay.
 */
export async function spendOnce(kind: string, value: string, expiresAt: number): Promise<boolean> {
  const res = await db()
    .insertInto("sso_used_values")
    .values({ value_hash: sha256(`${kind}:${value}`), expires_at: expiresAt })
    .onConflict((oc) => oc.column("value_hash").doNothing())
    .executeTakeFirst();
  return Number(res.numInsertedOrUpdatedRows ?? 0) === 1;
}

/** Housekeeping: values whose tokens can no longer be used anyway. */
export async function pruneUsedValues(now = Date.now()) {
  await db().deleteFrom("sso_used_values").where("expires_at", "<=", now).execute();
}

/**
 * A back-channel logout: ends the live sessions the provider names, by its session id (`sid`) or, without one, every
 * session of the subject. Returns how many ended.
 */
export async function revokeProviderSessions(provider: string, by: { subject?: string; sid?: string }): Promise<number> {
  if (!by.subject && !by.sid) return 0;
  let q = db().updateTable("sessions").set({ revoked_at: Date.now() }).where("sso_provider", "=", provider).where("revoked_at", "is", null);
  if (by.subject) q = q.where("sso_subject", "=", by.subject);
  if (by.sid) q = q.where("sso_sid", "=", by.sid);
  return Number((await q.executeTakeFirst()).numUpdatedRows);
}

/**
 * A provider removed from the console: its links to accounts, the memberships its groups gave and its sessions end
 * with it (in `trx`, with the removal), so that an id used again later links nobody.
 */
export async function forgetProviderRecords(trx: Trx, provider: string) {
  await trx.deleteFrom("sso_group_roles").where("provider", "=", provider).execute();
  await trx.deleteFrom("project_members").where("sso_provider", "=", provider).execute();
  await trx.deleteFrom("sso_identities").where("provider", "=", provider).execute();
  await trx
    .updateTable("sessions")
    .set({ revoked_at: Date.now() })
    .where("sso_provider", "=", provider)
    .where("revoked_at", "is", null)
    .execute();
}

/** The provider a session came from, if any (sign-out: whether to go on to the provider's logout). */
export async function sessionProvider(sessionIdHash: string): Promise<string | null> {
  const row = await db().selectFrom("sessions").select("sso_provider").where("id_hash", "=", sessionIdHash).executeTakeFirst();
  return row?.sso_provider ?? null;
}

/** The admin console's table of groups and roles, with the projects' names. */
export async function groupRoles(actor: Actor) {
  requireAdmin(actor);
  return db()
    .selectFrom("sso_group_roles as g")
    .innerJoin("projects as p", "p.id", "g.project_id")
    .select(["g.id", "g.provider", "g.group_name", "g.project_id", "p.name as project_name", "g.role"])
    .orderBy("g.provider")
    .orderBy("g.group_name")
    .orderBy("p.name")
    .execute();
}

export async function addGroupRole(actor: Actor, input: { provider: string; group: string; projectId: number; role: MemberRole }) {
  requireAdmin(actor);
  await write(async (trx) => {
    const project = await trx.selectFrom("projects").select("id").where("id", "=", input.projectId).executeTakeFirst();
    if (!project) throw new NotFoundError("Project not found");
    try {
      await trx
        .insertInto("sso_group_roles")
        .values({
          provider: input.provider,
          group_name: input.group,
          project_id: input.projectId,
          role: input.role,
          created_at: Date.now(),
        })
        .execute();
    } catch (error) {
      if (isUniqueViolation(error)) throw new ConflictError("This group already gives a role in this project.");
      throw error;
    }
    const changed = await reapplyGroups(trx, input.provider, actor);
    await recordAudit(
      {
        action: "sso.group_role_added",
        ...byActor(actor),
        subject: `project:${input.projectId}`,
        detail: { ...input, membershipsChanged: changed },
      },
      trx,
    );
  });
}

export async function removeGroupRole(actor: Actor, id: number) {
  requireAdmin(actor);
  await write(async (trx) => {
    const row = await trx.deleteFrom("sso_group_roles").where("id", "=", id).returningAll().executeTakeFirst();
    if (!row) throw new NotFoundError("Mapping not found");
    const changed = await reapplyGroups(trx, row.provider, actor);
    await recordAudit(
      {
        action: "sso.group_role_removed",
        ...byActor(actor),
        subject: `project:${row.project_id}`,
        detail: { provider: row.provider, group: row.group_name, role: row.role, membershipsChanged: changed },
      },
      trx,
    );
  });
}
