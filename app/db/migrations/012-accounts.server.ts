import type { Kysely, Migration } from "kysely";
import type { Dialect } from "../connection.server";

/**
 * Accounts: what a registration's decision needs (who decided, when, why, the account it made, the address it came
 * from), a TOTP secret waiting for its first code, and the indexes the admin console's lists page by.
 */
export function accounts(dialect: Dialect): Migration {
  const time = dialect === "postgres" ? "bigint" : "integer";
  return {
    async up(db: Kysely<any>) {
      for (const [column, type] of [
        ["ip", "text"],
        ["decided_at", time],
        ["decided_by", "integer"],
        ["reason", "text"],
        ["user_id", "integer"],
      ] as const)
        await db.schema.alterTable("registrations").addColumn(column, type).execute();
      await db.schema.createIndex("registrations_status").on("registrations").columns(["status", "id"]).execute();
      await db.schema.createIndex("registrations_email").on("registrations").column("email").execute();
      await db.schema.alterTable("users").addColumn("totp_pending_secret", "text").execute();
      await db.schema.createIndex("audit_log_actor").on("audit_log").columns(["actor_user_id", "id"]).execute();
      await db.schema.createIndex("audit_log_action").on("audit_log").columns(["action", "id"]).execute();
    },
  };
}
