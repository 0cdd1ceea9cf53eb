import { config, type OidcProvider } from "~/config.server";
import { db } from "~/db/connection.server";
import { openSecret, sealSecret } from "~/lib/crypto.server";
import { NotFoundError } from "~/lib/errors";
import { log } from "~/lib/log.server";
import { requireAdmin, type Actor } from "./actor";
import { byActor, recordAudit } from "./audit.server";
import { forgetProviderRecords } from "./sso.server";
import { write } from "./write.server";

/**
 * The company sign-in providers an admin added in the console (beside those of the environment, which the console
 * only shows). The client secret is sealed with a key from SESSION_SECRET and never leaves the server again: the
 * console shows whether one is set, and an edit without a new one keeps it.
 */
const PURPOSE = "sso client secret";

/** Every stored provider, its secret opened; one whose secret cannot be opened (SESSION_SECRET changed) is left out, with a log line. */
export async function storedProviders(): Promise<OidcProvider[]> {
  const rows = await db().selectFrom("sso_providers").selectAll().orderBy("name").execute();
  const out: OidcProvider[] = [];
  for (const r of rows) {
    const secret = r.client_secret_sealed === null ? null : openSecret(r.client_secret_sealed, config().sessionSecret, PURPOSE);
    if (r.client_secret_sealed !== null && secret === null) {
      log.error("a company sign-in provider's secret cannot be opened (was SESSION_SECRET changed?); enter it again in the console", {
        provider: r.id,
      });
      continue;
    }
    out.push({
      id: r.id,
      name: r.name,
      issuer: r.issuer,
      clientId: r.client_id,
      clientSecret: secret,
      scopes: r.scopes,
      groupsClaim: r.groups_claim,
      domains: r.domains.split(",").filter(Boolean),
      ssoOnly: r.sso_only === 1,
      newUsers: r.new_users,
    });
  }
  return out;
}

/** The console's view of a stored provider: everything but the secret, and whether one is set. */
export async function storedProvider(actor: Actor, id: string) {
  requireAdmin(actor);
  const row = await db().selectFrom("sso_providers").selectAll().where("id", "=", id).executeTakeFirst();
  if (!row) throw new NotFoundError("Provider not found");
  const { client_secret_sealed, ...rest } = row;
  return { ...rest, secretSet: client_secret_sealed !== null };
}

/**
 * Adds a provider or changes one (`secret` undefined keeps the stored one). The checks against the other providers
 * (its id, its domains) are the caller's (services/oidc.server.ts), which knows the environment's too.
 */
export async function saveStoredProvider(actor: Actor, p: Omit<OidcProvider, "clientSecret"> & { clientSecret?: string }, isNew: boolean) {
  requireAdmin(actor);
  const now = Date.now();
  const values = {
    name: p.name,
    issuer: p.issuer,
    client_id: p.clientId,
    scopes: p.scopes,
    groups_claim: p.groupsClaim,
    domains: p.domains.join(","),
    sso_only: p.ssoOnly ? 1 : 0,
    new_users: p.newUsers,
    updated_at: now,
    ...(p.clientSecret !== undefined ? { client_secret_sealed: sealSecret(p.clientSecret, config().sessionSecret, PURPOSE) } : {}),
  };
  await write(async (trx) => {
    if (isNew)
      await trx
        .insertInto("sso_providers")
        .values({ id: p.id, created_at: now, client_secret_sealed: null, ...values })
        .execute();
    else {
      const res = await trx.updateTable("sso_providers").set(values).where("id", "=", p.id).executeTakeFirst();
      if (Number(res.numUpdatedRows) !== 1) throw new NotFoundError("Provider not found");
    }
    // What changed, never the secret itself: only whether a new one was given.
    await recordAudit(
      {
        action: "sso.provider_saved",
        ...byActor(actor),
        subject: `provider:${p.id}`,
        detail: {
          issuer: p.issuer,
          clientId: p.clientId,
          domains: p.domains.join(","),
          ssoOnly: p.ssoOnly,
          newSecret: p.clientSecret !== undefined,
        },
      },
      trx,
    );
  });
}

/**
 * Removes a provider: its group table, the memberships its groups gave, its links to accounts and its sessions go
 * with it. The accounts stay (they may sign in otherwise).
 */
export async function deleteStoredProvider(actor: Actor, id: string) {
  requireAdmin(actor);
  await write(async (trx) => {
    const res = await trx.deleteFrom("sso_providers").where("id", "=", id).executeTakeFirst();
    if (Number(res.numDeletedRows) !== 1) throw new NotFoundError("Provider not found");
    await forgetProviderRecords(trx, id);
    await recordAudit({ action: "sso.provider_deleted", ...byActor(actor), subject: `provider:${id}` }, trx);
  });
}
