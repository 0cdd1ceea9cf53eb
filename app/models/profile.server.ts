import { db } from "~/db/connection.server";
import type { ProfileInput } from "~/lib/account-schemas";
import { mobileDigits } from "~/lib/account-schemas";
import { hashPassword, verifyPassword } from "~/lib/crypto.server";
import { config } from "~/config.server";
import { NotFoundError } from "~/lib/errors";
import { matchTotpStep, newTotpSecret } from "~/lib/totp.server";
import type { Actor } from "./actor";
import { byActor, recordAudit } from "./audit.server";
import { revokeUserSessions } from "./sessions.server";
import { requireWithinLimit } from "./rate-limits.server";
import { NotOnListError, resolveChoices } from "./reference.server";
import { write } from "./write.server";

/**
 * A person's own account: the profile form, the password, TOTP and their sessions. Every function acts on the
 * actor's own row only; which columns it writes is fixed here, so nothing posted can reach the role or the status.
 */
export async function profileOf(actor: Actor) {
  const [user, projects] = await Promise.all([
    db()
      .selectFrom("users as u")
      .leftJoin("org_units as o", "o.id", "u.org_unit_id")
      .select([
        "u.id",
        "u.email",
        "u.name",
        "u.surname",
        "u.mobile",
        "u.country_code",
        "u.timezone_id",
        "u.language_code",
        "u.org_unit_id",
        "o.name as orgUnit",
        "u.role",
        "u.password_hash",
        "u.totp_secret",
      ])
      .where("u.id", "=", actor.id)
      .executeTakeFirst(),
    db()
      .selectFrom("project_members as m")
      .innerJoin("projects as p", "p.id", "m.project_id")
      .select(["p.id", "p.name", "p.logo_key", "p.wsc", "m.role"])
      .where("m.user_id", "=", actor.id)
      .orderBy("p.name")
      .execute(),
  ]);
  if (!user) throw new NotFoundError("User not found");
  const { password_hash, totp_secret, ...rest } = user;
  return { ...rest, hasPassword: password_hash !== null, totpEnrolled: totp_secret !== null, projects };
}

/**
 * Checks of a secret from a signed-in session (the current password, a TOTP code) count against the person, as
 * sign-in attempts do: a stolen session cannot guess its way to the password or past TOTP.
 */
async function throttleSecretChecks(actor: Actor) {
  const { perAddress, windowMs } = config().rateLimit;
  await requireWithinLimit(`profile-secret:user:${actor.id}`, perAddress, windowMs, "Too many attempts.");
}

/** Saves the profile form; a choice that is not on its list changes nothing (InvalidError with the field). */
export async function updateProfile(actor: Actor, input: ProfileInput) {
  const choices = await resolveChoices(input);
  if (choices.bad) throw new NotOnListError(choices.bad);
  await write(async (trx) => {
    await trx
      .updateTable("users")
      .set({
        name: input.name,
        surname: input.surname,
        mobile: mobileDigits(input.mobile),
        country_code: choices.country.code,
        timezone_id: choices.timezone.id,
        language_code: choices.language.isoCode,
        org_unit_id: choices.orgUnit.id,
        updated_at: Date.now(),
      })
      .where("id", "=", actor.id)
      .execute();
    await recordAudit({ action: "profile.updated", ...byActor(actor), subject: `user:${actor.id}` }, trx);
  });
}

/**
 * Sets a new password. With one already set, the current one must match (checked here, so no route can skip it).
 * The person's other sessions end: whoever knew the old password is out.
 */
export async function changePassword(actor: Actor, current: string | undefined, next: string, currentSessionId: string | null) {
  const row = await db().selectFrom("users").select("password_hash").where("id", "=", actor.id).executeTakeFirstOrThrow();
  if (row.password_hash !== null) await throttleSecretChecks(actor);
  if (row.password_hash !== null && !(await verifyPassword(current ?? "", row.password_hash))) return false;
  const hash = await hashPassword(next);
  await write(async (trx) => {
    const now = Date.now();
    await trx.updateTable("users").set({ password_hash: hash, updated_at: now }).where("id", "=", actor.id).execute();
    await revokeUserSessions(actor.id, { except: currentSessionId }, trx);
    await recordAudit({ action: "password.changed", ...byActor(actor), subject: `user:${actor.id}` }, trx);
  });
  return true;
}

/** The secret offered for enrolment: the one already waiting, or a new one. Null when TOTP is enrolled. */
export async function pendingTotpSecret(actor: Actor): Promise<string | null> {
  const row = await db()
    .selectFrom("users")
    .select(["totp_secret", "totp_pending_secret"])
    .where("id", "=", actor.id)
    .executeTakeFirstOrThrow();
  if (row.totp_secret) return null;
  if (row.totp_pending_secret) return row.totp_pending_secret;
  const secret = newTotpSecret();
  // Only when none is waiting: two tabs opening the page at once show the same secret.
  await db()
    .updateTable("users")
    .set({ totp_pending_secret: secret })
    .where("id", "=", actor.id)
    .where("totp_pending_secret", "is", null)
    .execute();
  return (await db().selectFrom("users").select("totp_pending_secret").where("id", "=", actor.id).executeTakeFirstOrThrow())
    .totp_pending_secret;
}

/** Confirms enrolment with a code of the waiting secret; the step is recorded, so the same code cannot sign in after. */
export async function confirmTotp(actor: Actor, code: string): Promise<boolean> {
  const row = await db()
    .selectFrom("users")
    .select(["totp_secret", "totp_pending_secret"])
    .where("id", "=", actor.id)
    .executeTakeFirstOrThrow();
  if (row.totp_secret || !row.totp_pending_secret) return false;
  await throttleSecretChecks(actor);
  const step = matchTotpStep(row.totp_pending_secret, code);
  if (step === null) return false;
  return write(async (trx) => {
    const res = await trx
      .updateTable("users")
      .set({ totp_secret: row.totp_pending_secret, totp_pending_secret: null, totp_last_step: step, updated_at: Date.now() })
      .where("id", "=", actor.id)
      .where("totp_secret", "is", null)
      .where("totp_pending_secret", "=", row.totp_pending_secret)
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) !== 1) return false;
    await recordAudit({ action: "totp.enrolled", ...byActor(actor), subject: `user:${actor.id}` }, trx);
    return true;
  });
}

/** Removes one's own TOTP, proven by a current code (a lost phone is the admin's reset instead). */
export async function removeTotp(actor: Actor, code: string): Promise<boolean> {
  const row = await db().selectFrom("users").select(["totp_secret", "totp_last_step"]).where("id", "=", actor.id).executeTakeFirstOrThrow();
  if (!row.totp_secret) return false;
  await throttleSecretChecks(actor);
  const step = matchTotpStep(row.totp_secret, code);
  if (step === null || (row.totp_last_step !== null && step <= row.totp_last_step)) return false;
  return write(async (trx) => {
    await trx
      .updateTable("users")
      .set({ totp_secret: null, totp_pending_secret: null, totp_last_step: null, updated_at: Date.now() })
      .where("id", "=", actor.id)
      .execute();
    await recordAudit({ action: "totp.removed", ...byActor(actor), subject: `user:${actor.id}` }, trx);
    return true;
  });
}

/** "Sign out other sessions": every session of the person but this one ends at once. */
export async function signOutOtherSessions(actor: Actor, currentSessionId: string): Promise<number> {
  return write(async (trx) => {
    const n = await revokeUserSessions(actor.id, { except: currentSessionId }, trx);
    await recordAudit(
      { action: "sessions.signed_out_others", ...byActor(actor), subject: `user:${actor.id}`, detail: { sessions: n } },
      trx,
    );
    return n;
  });
}
