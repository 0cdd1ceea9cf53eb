import { db, type DB } from "~/db/connection.server";
import type { AuditAction } from "~/lib/audit-actions";
import { recordedAs, requireAdmin, type Actor } from "./actor";
import { normaliseEmail } from "./users.server";

/** Who did it, as an entry records them: the person (no one for the system and the CLI) and their address. */
export const byActor = (actor: Actor) => ({ actorUserId: recordedAs(actor), ip: actor.ip ?? null });

/** Appends to the audit log. `detail` must never hold secrets (tokens, passwords, codes). */
export async function recordAudit(
  entry: {
    action: AuditAction;
    actorUserId?: number | null;
    subject?: string | null;
    ip?: string | null;
    detail?: Record<string, string | number | boolean | null>;
  },
  /** A transaction, so the entry commits with the change it records. */
  executor: Pick<DB, "insertInto"> = db(),
) {
  await executor
    .insertInto("audit_log")
    .values({
      at: Date.now(),
      action: entry.action,
      actor_user_id: entry.actorUserId ?? null,
      subject: entry.subject ?? null,
      ip: entry.ip ?? null,
      detail: JSON.stringify(entry.detail ?? {}),
    })
    .execute();
}

export async function auditEntries(limit = 50) {
  return db().selectFrom("audit_log").selectAll().orderBy("id", "desc").limit(limit).execute();
}

export const AUDIT_PAGE = 50;

export interface AuditFilter {
  /** An e-mail address: the entries that person did. */
  user?: string;
  action?: string;
  /** Days, YYYY-MM-DD, UTC, both inclusive. */
  from?: string;
  to?: string;
}

const dayStart = (day: string) => Date.parse(`${day}T00:00:00Z`);

/** The admin console's audit log: filtered by who, what and when, newest first, keyset-paged on id. */
export async function auditPage(actor: Actor, filter: AuditFilter, before?: number) {
  requireAdmin(actor);
  let q = db()
    .selectFrom("audit_log as a")
    .leftJoin("users as u", "u.id", "a.actor_user_id")
    .select(["a.id", "a.at", "a.action", "a.subject", "a.ip", "a.detail", "u.email"])
    .orderBy("a.id", "desc")
    .limit(AUDIT_PAGE + 1);
  if (filter.user) q = q.where("u.email", "=", normaliseEmail(filter.user));
  if (filter.action) q = q.where("a.action", "=", filter.action);
  if (filter.from && !Number.isNaN(dayStart(filter.from))) q = q.where("a.at", ">=", dayStart(filter.from));
  if (filter.to && !Number.isNaN(dayStart(filter.to))) q = q.where("a.at", "<", dayStart(filter.to) + 86_400_000);
  if (before) q = q.where("a.id", "<", before);
  const rows = await q.execute();
  return {
    rows: rows.slice(0, AUDIT_PAGE).map((r) => ({ ...r, at: Number(r.at) })),
    next: rows.length > AUDIT_PAGE ? rows[AUDIT_PAGE - 1]!.id : null,
  };
}
