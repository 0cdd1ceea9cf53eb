import { db, type DB } from "~/db/connection.server";

export type AuditAction =
  | "sign_in.success"
  | "sign_in.failure"
  | "sign_in.rate_limited"
  | "sign_in.link_sent"
  | "sign_out"
  | "terms.accepted"
  | "bulk.download"
  | "share.created"
  | "share.opened"
  | "share.revoked";

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
