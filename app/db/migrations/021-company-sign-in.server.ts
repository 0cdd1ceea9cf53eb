import type { Kysely, Migration } from "kysely";
import type { Dialect } from "../connection.server";

/**
 * Company sign-in (OpenID Connect): the providers an admin added in the console (their client secrets sealed with a
 * key from SESSION_SECRET), who a provider's subject (at its issuer) is here, which memberships a provider's groups
 * gave, which of its groups give which role in which
 * project, the values a provider sends once (a sign-in's `state`, a logout token's `jti`) kept until they expire so
 * that a replay is refused, and on each session the provider, subject and provider session it came from (so that a
 * back-channel logout finds the sessions it names).
 */
export function companySignIn(dialect: Dialect): Migration {
  const pg = dialect === "postgres";
  const time = pg ? "bigint" : "integer";
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable("sso_providers")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("issuer", "text", (c) => c.notNull())
        .addColumn("client_id", "text", (c) => c.notNull())
        .addColumn("client_secret_sealed", "text")
        .addColumn("scopes", "text", (c) => c.notNull())
        .addColumn("groups_claim", "text", (c) => c.notNull())
        .addColumn("domains", "text", (c) => c.notNull())
        .addColumn("sso_only", "integer", (c) => c.notNull())
        .addColumn("new_users", "text", (c) => c.notNull())
        .addColumn("created_at", time, (c) => c.notNull())
        .addColumn("updated_at", time, (c) => c.notNull())
        .execute();
      await db.schema
        .createTable("sso_identities")
        .addColumn("provider", "text", (c) => c.notNull())
        .addColumn("issuer", "text", (c) => c.notNull())
        .addColumn("subject", "text", (c) => c.notNull())
        .addColumn("user_id", "integer", (c) => c.notNull().references("users.id").onDelete("cascade"))
        .addColumn("groups", "text")
        .addColumn("created_at", time, (c) => c.notNull())
        .addColumn("last_sign_in_at", time, (c) => c.notNull())
        .addPrimaryKeyConstraint("sso_identities_pk", ["provider", "issuer", "subject"])
        .execute();
      // One subject per account and provider: a second one (a reused address, two first sign-ins at once) is refused.
      await db.schema.createIndex("sso_identities_user").on("sso_identities").columns(["provider", "issuer", "user_id"]).unique().execute();

      const table = db.schema.createTable("sso_group_roles");
      await (
        pg
          ? table.addColumn("id", "integer", (c) => c.primaryKey().generatedByDefaultAsIdentity())
          : table.addColumn("id", "integer", (c) => c.primaryKey().autoIncrement())
      )
        .addColumn("provider", "text", (c) => c.notNull())
        .addColumn("group_name", "text", (c) => c.notNull())
        .addColumn("project_id", "integer", (c) => c.notNull().references("projects.id").onDelete("cascade"))
        .addColumn("role", "text", (c) => c.notNull())
        .addColumn("created_at", time, (c) => c.notNull())
        .addUniqueConstraint("sso_group_roles_unique", ["provider", "group_name", "project_id"])
        .execute();

      await db.schema
        .createTable("sso_used_values")
        .addColumn("value_hash", "text", (c) => c.primaryKey())
        .addColumn("expires_at", time, (c) => c.notNull())
        .execute();

      for (const column of ["sso_provider", "sso_subject", "sso_sid"])
        await db.schema.alterTable("sessions").addColumn(column, "text").execute();
      // A membership a provider's groups gave (its id), or null: given by hand, which the groups never change.
      await db.schema.alterTable("project_members").addColumn("sso_provider", "text").execute();
      // A TOTP challenge after a company sign-in: the provider, subject and sid the session will carry (JSON).
      await db.schema.alterTable("sign_in_tokens").addColumn("sso", "text").execute();
      await db.schema.createIndex("sessions_sso").on("sessions").columns(["sso_provider", "sso_subject"]).execute();
    },
  };
}
