import { db } from "~/db/connection.server";
import { currentZoneName } from "~/db/reference-data";
import type { Registration, User } from "~/db/schema";
import { ConflictError, NotFoundError } from "~/lib/errors";
import type { MemberRole, RegistrationInput } from "~/lib/account-schemas";
import { mobileDigits } from "~/lib/account-schemas";
import { requireAdmin, type Actor } from "./actor";
import { byActor, recordAudit } from "./audit.server";
import { resolveChoices } from "./reference.server";
import { normaliseEmail } from "./users.server";
import { isUniqueViolation, write } from "./write.server";

/** What a submitted application came to: stored, already waiting, or an address that has an account. */
export type Submitted =
  { outcome: "stored"; id: number } | { outcome: "waiting" } | { outcome: "has_account"; user: Pick<User, "email" | "name" | "status"> };

/**
 * Stores an application. The choices must be on the reference lists (a hand-made post with another value changes
 * nothing). An address with an account, or with an application already waiting, stores nothing; the caller answers
 * every outcome the same way (no account enumeration) and tells the address's owner by e-mail.
 */
export async function submitRegistration(
  input: RegistrationInput,
  ip: string | null,
): Promise<Submitted | { outcome: "invalid"; field: string }> {
  const choices = await resolveChoices(input);
  if (choices.bad) return { outcome: "invalid", field: choices.bad };
  const email = normaliseEmail(input.email);
  const user = await db().selectFrom("users").select(["email", "name", "status"]).where("email", "=", email).executeTakeFirst();
  if (user) return { outcome: "has_account", user };
  const waiting = await db()
    .selectFrom("registrations")
    .select("id")
    .where("email", "=", email)
    .where("status", "=", "submitted")
    .executeTakeFirst();
  if (waiting) return { outcome: "waiting" };
  const row = await db()
    .insertInto("registrations")
    .values({
      name: input.name,
      surname: input.surname,
      email,
      country_code: choices.dial.dialCode,
      mobile: mobileDigits(input.mobile),
      country: choices.country.code,
      timezone: choices.timezone.name,
      utc_offset: choices.timezone.offset,
      org_unit: choices.orgUnit.name,
      language: choices.language.name,
      iso_code: choices.language.isoCode,
      client: input.client,
      sim_use: input.sim_use,
      status: "submitted",
      created_at: Date.now(),
      ip,
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  return { outcome: "stored", id: row.id };
}

export const REGISTRATIONS_PAGE = 50;

/** The admin queue: applications waiting, oldest first (keyset on id). */
export async function pendingRegistrations(actor: Actor, after = 0) {
  requireAdmin(actor);
  const rows = await db()
    .selectFrom("registrations")
    .selectAll()
    .where("status", "=", "submitted")
    .where("id", ">", after)
    .orderBy("id")
    .limit(REGISTRATIONS_PAGE + 1)
    .execute();
  return { rows: rows.slice(0, REGISTRATIONS_PAGE), next: rows.length > REGISTRATIONS_PAGE ? rows[REGISTRATIONS_PAGE - 1]!.id : null };
}

export async function countPendingRegistrations(): Promise<number> {
  const row = await db()
    .selectFrom("registrations")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("status", "=", "submitted")
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** One waiting application; anything else (unknown, decided) is not found. */
export async function pendingRegistration(actor: Actor, id: number): Promise<Registration> {
  requireAdmin(actor);
  const row = await db().selectFrom("registrations").selectAll().where("id", "=", id).where("status", "=", "submitted").executeTakeFirst();
  if (!row) throw new NotFoundError("Application not found");
  return row;
}

/**
 * Approves an application: makes the active account from it (the lists' ids, not the texts) with a membership and
 * role per chosen project, marks the application, and records it, all in one transaction. A second approval of the
 * same application, or an address that got an account meanwhile, changes nothing.
 */
export async function approveRegistration(actor: Actor, id: number, memberships: { projectId: number; role: MemberRole }[]) {
  requireAdmin(actor);
  try {
    return await write(async (trx) => {
      const now = Date.now();
      // Claimed first (the status moves only from 'submitted'), so a reject racing this approval cannot both win.
      const reg = await trx
        .updateTable("registrations")
        .set({ status: "approved", decided_at: now, decided_by: actor.id })
        .where("id", "=", id)
        .where("status", "=", "submitted")
        .returningAll()
        .executeTakeFirst();
      if (!reg) throw new NotFoundError("Application not found");
      const projectIds = [...new Set(memberships.map((m) => m.projectId))];
      const known = projectIds.length ? await trx.selectFrom("projects").select("id").where("id", "in", projectIds).execute() : [];
      if (known.length !== projectIds.length || projectIds.length === 0) throw new NotFoundError("Project not found");
      const [timezone, orgUnit, country] = await Promise.all([
        // By its current name: an application stored under a legacy one still finds its zone.
        trx.selectFrom("timezones").select("id").where("name", "=", currentZoneName(reg.timezone)).executeTakeFirst(),
        trx.selectFrom("org_units").select("id").where("name", "=", reg.org_unit).executeTakeFirst(),
        trx.selectFrom("countries").select("code").where("code", "=", reg.country).executeTakeFirst(),
      ]);
      const user = await trx
        .insertInto("users")
        .values({
          email: reg.email,
          name: reg.name,
          surname: reg.surname,
          mobile: reg.mobile,
          country_code: country?.code ?? null,
          timezone_id: timezone?.id ?? null,
          language_code: reg.iso_code,
          org_unit_id: orgUnit?.id ?? null,
          role: "user",
          status: "active",
          created_at: now,
          updated_at: now,
        })
        .returning(["id", "email", "name"])
        .executeTakeFirstOrThrow();
      await trx
        .insertInto("project_members")
        .values(memberships.map((m) => ({ project_id: m.projectId, user_id: user.id, role: m.role, created_at: now })))
        .execute();
      await trx.updateTable("registrations").set({ user_id: user.id }).where("id", "=", id).execute();
      await recordAudit(
        {
          action: "registration.approved",
          ...byActor(actor),
          subject: `user:${user.id}`,
          detail: { registration: id, projects: projectIds.join(",") },
        },
        trx,
      );
      return user;
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw new ConflictError("An account with this e-mail address already exists.");
    throw err;
  }
}

/** Rejects an application with an optional reason (e-mailed by the caller), recorded in the audit log. */
export async function rejectRegistration(actor: Actor, id: number, reason: string | null) {
  requireAdmin(actor);
  return write(async (trx) => {
    const reg = await trx
      .updateTable("registrations")
      .set({ status: "rejected", decided_at: Date.now(), decided_by: actor.id, reason: reason || null })
      .where("id", "=", id)
      .where("status", "=", "submitted")
      .returning(["email", "name"])
      .executeTakeFirst();
    if (!reg) throw new NotFoundError("Application not found");
    await recordAudit(
      { action: "registration.rejected", ...byActor(actor), subject: `registration:${id}`, detail: { reason: Boolean(reason) } },
      trx,
    );
    return reg;
  });
}
