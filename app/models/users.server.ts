import { db } from "~/db/connection.server";
import type { NewUser, User } from "~/db/schema";
import type { Actor } from "./actor";

export type PublicUser = Pick<User, "id" | "email" | "name" | "surname" | "role" | "status"> & {
  termsAcknowledged: boolean;
  totpEnrolled: boolean;
};

export function toPublicUser(
  u: Pick<User, "id" | "email" | "name" | "surname" | "role" | "status" | "terms_acknowledged_at" | "totp_secret">,
): PublicUser {
  return {
    id: u.id,
    email: u.email,
    name: u.name,
    surname: u.surname,
    role: u.role,
    status: u.status,
    termsAcknowledged: u.terms_acknowledged_at !== null,
    totpEnrolled: u.totp_secret !== null,
  };
}

export const normaliseEmail = (email: string) => email.trim().toLowerCase();

/** Sign-in lookups happen before there is an actor, so these take the address itself. */
export async function findUserByEmail(email: string): Promise<User | undefined> {
  return db().selectFrom("users").selectAll().where("email", "=", normaliseEmail(email)).executeTakeFirst();
}

export async function findUserById(id: number): Promise<User | undefined> {
  return db().selectFrom("users").selectAll().where("id", "=", id).executeTakeFirst();
}

export async function createUser(
  input: Pick<NewUser, "email" | "name" | "surname"> & Partial<Omit<NewUser, "id" | "created_at" | "updated_at">>,
): Promise<User> {
  const now = Date.now();
  return db()
    .insertInto("users")
    .values({ status: "active", role: "user", ...input, email: normaliseEmail(input.email), created_at: now, updated_at: now })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function setTotpSecret(userId: number, secret: string | null) {
  await db()
    .updateTable("users")
    .set({ totp_secret: secret, totp_last_step: null, updated_at: Date.now() })
    .where("id", "=", userId)
    .execute();
}

/**
 * Records an accepted TOTP step. Returns false when this step (or a later one) was already
 * accepted: the compare-and-set in one UPDATE makes a replayed code fail even under races.
 */
export async function acceptTotpStep(userId: number, step: number): Promise<boolean> {
  const res = await db()
    .updateTable("users")
    .set({ totp_last_step: step })
    .where("id", "=", userId)
    .where((eb) => eb.or([eb("totp_last_step", "is", null), eb("totp_last_step", "<", step)]))
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

export async function acknowledgeTerms(actor: Actor) {
  await db().updateTable("users").set({ terms_acknowledged_at: Date.now() }).where("id", "=", actor.id).execute();
}

export async function countUsers(): Promise<number> {
  const row = await db()
    .selectFrom("users")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
