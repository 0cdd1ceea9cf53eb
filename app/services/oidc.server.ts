import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify, type JWTPayload } from "jose";
import * as client from "openid-client";
import { config, oidcProviderProblems, type OidcProvider } from "~/config.server";
import { db } from "~/db/connection.server";
import type { Actor } from "~/models/actor";
import { deleteStoredProvider, saveStoredProvider, storedProviders } from "~/models/sso-providers.server";
import { log } from "~/lib/log.server";
import { REGISTRATION_LIMITS } from "~/lib/account-schemas";
import { safeRedirect } from "~/lib/redirect";
import { EMAIL_PATTERN } from "~/lib/schemas";
import { activeAdmins } from "~/models/admin-users.server";
import { recordAudit } from "~/models/audit.server";
import { admitPerson, revokeProviderSessions, spendOnce, type Admission } from "~/models/sso.server";
import type { RequestMeta } from "~/sessions.server";

/**
 * Company sign-in with OpenID Connect (decision 0025): plain functions over `openid-client`, as decision 0021 planned.
 * The flow is the authorization code grant with PKCE, `state` and `nonce`; the transaction (those three, where to go
 * afterwards) travels in a signed cookie and its `state` is used once. Who gets in is the models' (models/sso.server.ts).
 */

/** The sign-in's transaction, kept in a signed cookie between the redirect out and the callback. */
export interface SsoTransaction {
  provider: string;
  state: string;
  nonce: string;
  verifier: string;
  redirectTo: string | null;
  startedAt: number;
}
/** How long a person may take at their provider before the callback is refused. */
export const TRANSACTION_TTL_MS = 10 * 60_000;

/** The authorization errors a provider may send back (RFC 6749 §4.1.2.1, OpenID Connect Core §3.1.2.6). */
const OAUTH_ERRORS = new Set([
  "access_denied",
  "invalid_request",
  "unauthorized_client",
  "unsupported_response_type",
  "invalid_scope",
  "server_error",
  "temporarily_unavailable",
  "interaction_required",
  "login_required",
  "account_selection_required",
  "consent_required",
  "invalid_request_uri",
  "invalid_request_object",
  "request_not_supported",
  "request_uri_not_supported",
  "registration_not_supported",
]);

export type RefusalReason =
  | "expired_or_replayed"
  | "claims_invalid"
  | "provider_error"
  | "token_invalid"
  | "provider_unreachable"
  | "email_unverified"
  | "domain"
  | Extract<Admission, { admitted: false }>["reason"];

/** A refused company sign-in: what the person reads, the status, and the reason the audit log keeps. */
export class SsoRefusal extends Error {
  constructor(
    public reason: RefusalReason,
    message: string,
    public status: number,
    /** Whom to ask, on a refusal a Koala administrator can lift. */
    public contacts: { name: string; email: string }[] = [],
    /** The application form, prefilled with what the provider said (a provider that sends new people there). */
    public applyUrl: string | null = null,
  ) {
    super(message);
    this.name = "SsoRefusal";
  }
}

/**
 * The providers: the environment's, then those an admin added in the console (models/sso-providers.server.ts),
 * read again at most every 30 s (another instance's change reaches this one within that) and at once after a
 * change made here.
 */
const STORED_TTL_MS = 30_000;
let stored: { db: unknown; at: number; list: OidcProvider[] } | null = null;
export async function ssoProviders(): Promise<OidcProvider[]> {
  const handle = db();
  if (!stored || stored.db !== handle || Date.now() - stored.at > STORED_TTL_MS)
    stored = { db: handle, at: Date.now(), list: await storedProviders() };
  return [...config().oidc.providers, ...stored.list];
}
/** At start: the stored providers read, and every provider's discovery begun (its endpoints join the CSP). */
export async function warmProviders() {
  for (const p of await ssoProviders())
    discover(p).catch((error: unknown) =>
      log.warn("sso discovery failed at start; tried again at the next sign-in", {
        provider: p.id,
        error: error instanceof Error ? error.message : String(error),
      }),
    );
}

export const ssoProvider = async (id: string | undefined): Promise<OidcProvider | undefined> =>
  (await ssoProviders()).find((p) => p.id === id);

/**
 * The providers' origins for the pages' CSP `form-action` (a post may end at a provider: an SSO-only address, a
 * sign-out), as last read; a stale list is read again in the background. server/headers.ts asks through the entry.
 */
let origins: { from: unknown[]; list: string[] } = { from: [], list: [] };
/** The origins of each provider's authorization and end-session endpoints, once discovered (they may not be the issuer's). */
const endpointOrigins = new Map<string, string[]>();
let endpointsVersion = 0;
export function providerOrigins(): string[] {
  if (!stored || Date.now() - stored.at > STORED_TTL_MS) void ssoProviders().catch(() => {});
  // Worked out again only when a list is another one (every page asks).
  const from = [config().oidc.providers, stored?.list, endpointsVersion];
  if (from.some((part, i) => part !== origins.from[i])) {
    const providers = [...config().oidc.providers, ...(stored?.list ?? [])];
    const all = providers.flatMap((p) => [new URL(p.issuer).origin, ...(endpointOrigins.get(p.id) ?? [])]);
    origins = { from, list: [...new Set(all)] };
  }
  return origins.list;
}

/** The provider whose domains include this address, when its people must sign in there (SSO only). */
export async function ssoOnlyProviderFor(email: string): Promise<OidcProvider | undefined> {
  const domain = email.trim().toLowerCase().split("@").pop() ?? "";
  return (await ssoProviders()).find((p) => p.ssoOnly && p.domains.includes(domain));
}

/** A provider as the console's form gives it; an empty `clientSecret` keeps the stored one. */
export type ProviderInput = Omit<OidcProvider, "clientSecret"> & { clientSecret: string };

/**
 * The console's save: the configuration's rules (oidcProviderProblems), an id no other provider has, domains no
 * other provider claims. Returns the problems by field (nothing saved), or none.
 */
export async function saveConsoleProvider(actor: Actor, input: ProviderInput, isNew: boolean) {
  const problems: { field: string; message: string }[] = oidcProviderProblems(input, config().production);
  const all = await ssoProviders();
  if (config().oidc.providers.some((p) => p.id === input.id))
    problems.push({ field: "id", message: "This provider is set in the environment; change it there." });
  else if (isNew && all.some((p) => p.id === input.id)) problems.push({ field: "id", message: "Another provider has this id." });
  for (const d of input.domains) {
    const other = all.find((p) => p.id !== input.id && p.domains.includes(d));
    if (other) problems.push({ field: "domains", message: `${d} already signs in through ${other.name}.` });
  }
  if (problems.length) return problems;
  const { clientSecret, ...rest } = input;
  await saveStoredProvider(actor, clientSecret ? { ...rest, clientSecret } : rest, isNew);
  await forgetProvider(input.id);
  return [];
}

export async function deleteConsoleProvider(actor: Actor, id: string) {
  await deleteStoredProvider(actor, id);
  await forgetProvider(id);
}

/** After a change here: the provider's discovery and keys are forgotten, and the stored list is read afresh. */
async function forgetProvider(id: string) {
  stored = null;
  discovered.delete(id);
  jwksByProvider.delete(id);
  await ssoProviders();
}

/** Where a provider sends the person back; registered at the provider as the redirect URI. */
export const callbackUrl = (p: OidcProvider) => `${config().appUrl}/auth/sso/${p.id}/callback`;
/** Where a provider's back-channel logout posts; registered at the provider as `backchannel_logout_uri`. */
export const backchannelUrl = (p: OidcProvider) => `${config().appUrl}/auth/sso/${p.id}/backchannel-logout`;

/** Discovery, once per provider and process while it answers (a failure is tried again on the next sign-in). */
const discovered = new Map<string, { settings: string; pending: Promise<client.Configuration> }>();
function discover(p: OidcProvider): Promise<client.Configuration> {
  const cfg = config();
  const settings = JSON.stringify([p.issuer, p.clientId, p.clientSecret, cfg.oidc.timeoutSeconds, cfg.oidc.clockToleranceSeconds]);
  const known = discovered.get(p.id);
  if (known && known.settings === settings) return known.pending;
  const pending = client
    .discovery(
      new URL(p.issuer),
      p.clientId,
      { [client.clockTolerance]: cfg.oidc.clockToleranceSeconds },
      p.clientSecret ? client.ClientSecretBasic(p.clientSecret) : client.None(),
      {
        timeout: cfg.oidc.timeoutSeconds,
        execute: [
          // The ID token's signature is checked against the provider's keys although it comes straight from the
          // token endpoint (OpenID Connect allows trusting TLS there): a token signed with another key, or with
          // `alg: none`, is refused whatever the channel.
          client.enableNonRepudiationChecks,
          // http:// issuers are refused in production by the configuration; elsewhere they are a local provider.
          ...(new URL(p.issuer).protocol === "http:" ? [client.allowInsecureRequests] : []),
        ],
      },
    )
    .then((server) => {
      const meta = server.serverMetadata();
      const endpoints = [meta.authorization_endpoint, meta.end_session_endpoint].filter((u): u is string => typeof u === "string");
      endpointOrigins.set(
        p.id,
        endpoints.map((u) => new URL(u).origin),
      );
      endpointsVersion++;
      return server;
    })
    .catch((error: unknown) => {
      discovered.delete(p.id);
      throw error;
    });
  discovered.set(p.id, { settings, pending });
  return pending;
}

/** A provider that did not answer (or not in time): audited and logged once, and the page says so. */
async function refusedUnreachable(p: OidcProvider, meta: RequestMeta, error: unknown) {
  await recordAudit({
    action: "sso.refused",
    ip: meta.ip,
    subject: `provider:${p.id}`,
    detail: { provider: p.id, reason: "provider_unreachable" },
  });
  log.warn("sso sign-in refused", {
    provider: p.id,
    reason: "provider_unreachable",
    error: error instanceof Error ? error.message : String(error),
  });
  return new SsoRefusal("provider_unreachable", `${p.name} did not answer. Please try again in a few minutes.`, 502);
}

/** Network trouble and time-outs, as opposed to a provider's answer that failed a check. */
function isUnreachable(error: unknown): boolean {
  const seen = new Set<unknown>();
  for (let e: unknown = error; e && !seen.has(e); e = (e as { cause?: unknown }).cause) {
    seen.add(e);
    const name = (e as Error).name;
    const code = (e as { code?: string }).code ?? "";
    if (name === "TimeoutError" || name === "AbortError") return true;
    if (/^(ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|UND_ERR_)/.test(code)) return true;
    if (e instanceof TypeError && /fetch failed/.test(e.message)) return true;
  }
  return false;
}

/** The redirect out: the provider's authorization URL and the transaction the callback checks. */
export async function beginSignIn(
  p: OidcProvider,
  opts: { redirectTo?: string | null; loginHint?: string | null },
  meta: RequestMeta,
): Promise<{ url: string; transaction: SsoTransaction }> {
  let server: client.Configuration;
  try {
    server = await discover(p);
  } catch (error) {
    throw await refusedUnreachable(p, meta, error);
  }
  const transaction: SsoTransaction = {
    provider: p.id,
    state: client.randomState(),
    nonce: client.randomNonce(),
    verifier: client.randomPKCECodeVerifier(),
    redirectTo: opts.redirectTo ? safeRedirect(opts.redirectTo) : null,
    startedAt: Date.now(),
  };
  const params: Record<string, string> = {
    redirect_uri: callbackUrl(p),
    scope: p.scopes,
    state: transaction.state,
    nonce: transaction.nonce,
    code_challenge: await client.calculatePKCECodeChallenge(transaction.verifier),
    code_challenge_method: "S256",
  };
  if (opts.loginHint && opts.loginHint.length <= 200) params.login_hint = opts.loginHint;
  return { url: client.buildAuthorizationUrl(server, params).href, transaction };
}

export interface SsoSignIn {
  userId: number;
  redirectTo: string | null;
  subject: string;
  sid: string | null;
  /** The account has Koala's TOTP enrolled: its code is asked too, as after an e-mailed link. */
  totpSecret: boolean;
}

/**
 * The callback: checks the transaction (its provider, its age, its `state` never used before), exchanges the code
 * (openid-client checks PKCE, `state`, the ID token's signature, issuer, audience, times and `nonce`), reads the
 * claims (the ID token's, and UserInfo's when the groups are not in it), then lets the person in through the models.
 * Every refusal is audited and logged once, and throws an SsoRefusal.
 */
export async function completeSignIn(
  p: OidcProvider,
  current: URL,
  transaction: SsoTransaction | null,
  meta: RequestMeta,
): Promise<SsoSignIn> {
  const refuse = async (reason: RefusalReason, message: string, status: number, extra: Record<string, string> = {}) => {
    // A callback without any transaction is anyone's GET (a bookmark, a crawler): logged, not written to the audit log.
    if (extra.why !== "no_transaction")
      await recordAudit({ action: "sso.refused", ip: meta.ip, subject: `provider:${p.id}`, detail: { provider: p.id, reason, ...extra } });
    log.warn("sso sign-in refused", { provider: p.id, reason, ...extra });
    const askAdmins = reason === "no_group" || reason === "no_account" || reason === "groups_missing";
    return new SsoRefusal(reason, message, status, askAdmins ? await contacts() : []);
  };
  const again = "This sign-in has expired or was already used. Please start again from the sign-in page.";
  if (!transaction || transaction.provider !== p.id || Date.now() - transaction.startedAt > TRANSACTION_TTL_MS)
    throw await refuse("expired_or_replayed", again, 400, { why: transaction ? "expired_or_other_provider" : "no_transaction" });
  // The provider's own refusal (the person cancelled, or may not use Koala there): its error code, if a known one.
  const providerError = current.searchParams.get("error");
  if (providerError !== null) {
    const code = OAUTH_ERRORS.has(providerError) ? providerError : "error";
    throw await refuse("provider_error", `${p.name} did not sign you in (${code}). Please try again.`, 400, { error: code });
  }
  if (current.searchParams.get("state") !== transaction.state)
    throw await refuse("expired_or_replayed", again, 400, { why: "state_mismatch" });
  if (!(await spendOnce("state", transaction.state, transaction.startedAt + TRANSACTION_TTL_MS)))
    throw await refuse("expired_or_replayed", again, 400, { why: "state_replayed" });

  let claims: Record<string, unknown>;
  try {
    const server = await discover(p);
    // The callback's URL as registered (behind a proxy the request's own URL may say http:// or another host).
    const answered = new URL(callbackUrl(p));
    answered.search = current.search;
    const tokens = await client.authorizationCodeGrant(server, answered, {
      pkceCodeVerifier: transaction.verifier,
      expectedState: transaction.state,
      expectedNonce: transaction.nonce,
      idTokenExpected: true,
    });
    claims = { ...tokens.claims() };
    // openid-client checks `exp` and `nbf`; an ID token issued later than now (past the tolerance) is refused too.
    if (typeof claims.iat === "number" && claims.iat > Date.now() / 1000 + config().oidc.clockToleranceSeconds)
      throw new Error("the ID token was issued in the future");
    if (claims[p.groupsClaim] === undefined && tokens.access_token && server.serverMetadata().userinfo_endpoint) {
      const info = await client.fetchUserInfo(server, tokens.access_token, String(claims.sub));
      claims = { ...info, ...claims, [p.groupsClaim]: info[p.groupsClaim] ?? claims[p.groupsClaim] };
    }
  } catch (error) {
    // openid-client's message, and the provider's OAuth error code where it sent one (invalid_grant, invalid_client…).
    const code = (error as { error?: unknown }).error;
    const message = `${error instanceof Error ? error.message : String(error)}${typeof code === "string" ? ` (${code.slice(0, 40)})` : ""}`;
    if (isUnreachable(error)) throw await refusedUnreachable(p, meta, error);
    throw await refuse(
      "token_invalid",
      `${p.name} did not confirm who you are. Please try again; if it happens again, tell your administrator.`,
      400,
      { error: message.slice(0, 200) },
    );
  }

  const subject = typeof claims.sub === "string" ? claims.sub : "";
  const sid = claims.sid === undefined ? null : claims.sid;
  // What becomes a key or a row here must be a plain, bounded string (a NUL would fail PostgreSQL's insert).
  if (!usableText(subject, 255) || (sid !== null && !usableText(sid, 255)))
    throw await refuse("claims_invalid", `${p.name} sent details Koala cannot use. Please tell your administrator.`, 400, {
      claim: "sub/sid",
    });
  const email = typeof claims.email === "string" ? claims.email.trim().toLowerCase() : "";
  // Entra ID sends no email_verified; its optional claim xms_edov ("e-mail domain owner verified") says the same.
  if (!email || (claims.email_verified !== true && claims.xms_edov !== true))
    throw await refuse(
      "email_unverified",
      `${p.name} did not give a confirmed e-mail address, so Koala cannot tell whose account this is. Please ask your IT department.`,
      403,
    );
  if (!EMAIL_PATTERN.test(email) || email.length > REGISTRATION_LIMITS.email)
    throw await refuse("claims_invalid", `${p.name} sent details Koala cannot use. Please tell your administrator.`, 400, {
      claim: "email",
    });
  const domain = email.split("@")[1]!;
  if (!p.domains.includes(domain))
    throw await refuse("domain", `Koala does not sign in ${email} through ${p.name}. Please use the sign-in page's other ways in.`, 403, {
      domain,
    });

  const groups = groupsOf(claims[p.groupsClaim]);
  const admission = await admitPerson(
    {
      provider: p.id,
      issuer: (await discover(p)).serverMetadata().issuer,
      subject,
      email,
      name: nameOf(claims, "given_name") ?? firstWord(claims.name),
      surname: nameOf(claims, "family_name") ?? restWords(claims.name),
      groups,
    },
    p.newUsers,
  );
  if (!admission.admitted) {
    const why: Record<typeof admission.reason, [string, number]> = {
      disabled: ["The account for this address is disabled. Please contact your administrator.", 403],
      pending: ["Your registration is still waiting for approval; you will get an e-mail once it is approved.", 403],
      no_account: ["There is no Koala account for this address yet. Please ask a Koala administrator to make one.", 403],
      apply: [
        `You do not have a Koala account yet. Apply for one: an administrator reviews it, and once it is approved you sign in with ${p.name}.`,
        403,
      ],
      no_group: [noProject(p), 403],
      groups_missing: [
        `${p.name} did not say which groups you are in, so Koala cannot tell which projects you may see. Please ask your IT department or a Koala administrator.`,
        403,
      ],
      other_subject: [`This address already belongs to another ${p.name} account. Please ask a Koala administrator.`, 403],
    };
    const [message, status] = why[admission.reason];
    const refusal = await refuse(admission.reason, message, status);
    if (admission.reason === "apply") {
      const prefill = new URLSearchParams({ email });
      const name = nameOf(claims, "given_name") ?? firstWord(claims.name);
      const surname = nameOf(claims, "family_name") ?? restWords(claims.name);
      if (name) prefill.set("name", name);
      if (surname) prefill.set("surname", surname);
      refusal.applyUrl = `/pending?${prefill}`;
    }
    throw refusal;
  }
  if (admission.projects === 0 && admission.user.role !== "admin") throw await refuse("no_group", noProject(p), 403);
  if (groups === null) log.warn("sso sign-in without a groups claim: roles left as they were", { provider: p.id, claim: p.groupsClaim });
  return {
    userId: admission.user.id,
    redirectTo: transaction.redirectTo,
    subject,
    sid: sid as string | null,
    totpSecret: admission.user.totp_secret !== null,
  };
}

/** A string of at most `max` characters and no control characters. */
const usableText = (v: unknown, max: number): v is string => typeof v === "string" && v.length > 0 && v.length <= max && !/\p{Cc}/u.test(v);
const noProject = (p: OidcProvider) =>
  `You are signed in at ${p.name}, but none of your groups gives access to a Koala project. Please ask your IT department to add you to a Koala group, or ask a Koala administrator.`;

/** The groups claim: a list of names, one name alone (some providers send that for a single group), or none (null). */
function groupsOf(claim: unknown): string[] | null {
  if (typeof claim === "string") return usableText(claim, 200) ? [claim] : [];
  if (!Array.isArray(claim)) return null;
  return claim.filter((g): g is string => usableText(g, 200));
}

/** A name claim as Koala keeps it: without control characters, at most 50 characters; null when there is none. */
const cleanName = (v: unknown) => (typeof v === "string" ? v.replace(/\p{Cc}/gu, "").trim() : "");
const nameOf = (claims: Record<string, unknown>, key: string) => cleanName(claims[key]).slice(0, 50) || null;
const firstWord = (v: unknown) => cleanName(v).split(/\s+/)[0]!.slice(0, 50) || null;
const restWords = (v: unknown) => (cleanName(v) ? cleanName(v).split(/\s+/).slice(1).join(" ").slice(0, 50) : null);

/** Whom a person without a project asks: the active admins (at most three). */
async function contacts() {
  return (await activeAdmins()).slice(0, 3).map((a) => ({ name: a.name, email: a.email }));
}

/** RP-initiated logout: the provider's end-session address, back to /login afterwards; null when it has none. */
export async function providerLogoutUrl(providerId: string): Promise<string | null> {
  const p = await ssoProvider(providerId);
  if (!p) return null;
  try {
    const server = await discover(p);
    if (!server.serverMetadata().end_session_endpoint) return null;
    return client.buildEndSessionUrl(server, { client_id: p.clientId, post_logout_redirect_uri: `${config().appUrl}/login` }).href;
  } catch {
    return null; // the provider is down: the Koala session has ended, which is what matters here
  }
}

const jwksByProvider = new Map<string, { uri: string; keys: ReturnType<typeof createRemoteJWKSet> }>();
const BACKCHANNEL_EVENT = "http://schemas.openid.net/event/backchannel-logout";
/** Logout tokens must be signed with a key of the provider's: never `none`, never a shared secret. */
const ASYMMETRIC = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"];

/**
 * Back-channel logout (OpenID Connect Back-Channel Logout 1.0): checks the logout token (signature with the
 * provider's keys, issuer, audience, times, the event, no `nonce`, a `sub` or `sid`, its `jti` used once) and ends
 * the sessions it names. Returns how many ended; throws an SsoRefusal (400) for a token that fails a check.
 */
export async function backchannelLogout(p: OidcProvider, logoutToken: string, meta: RequestMeta): Promise<number> {
  const bad = (why: string) => {
    log.warn("sso back-channel logout refused", { provider: p.id, why });
    return new SsoRefusal("token_invalid", "invalid logout token", 400);
  };
  let payload: JWTPayload;
  try {
    // An explicitly typed token of another kind (an access token, a security event) is not a logout token.
    const typ = decodeProtectedHeader(logoutToken).typ?.toLowerCase();
    if (typ !== undefined && typ !== "logout+jwt" && typ !== "jwt") throw bad(`typ ${typ.slice(0, 40)}`);
    const server = await discover(p);
    const uri = server.serverMetadata().jwks_uri;
    if (!uri) throw bad("no jwks_uri");
    let jwks = jwksByProvider.get(p.id);
    if (!jwks || jwks.uri !== uri) {
      jwks = { uri, keys: createRemoteJWKSet(new URL(uri), { timeoutDuration: config().oidc.timeoutSeconds * 1000 }) };
      jwksByProvider.set(p.id, jwks);
    }
    ({ payload } = await jwtVerify(logoutToken, jwks.keys, {
      issuer: server.serverMetadata().issuer,
      audience: p.clientId,
      algorithms: ASYMMETRIC,
      clockTolerance: config().oidc.clockToleranceSeconds,
      maxTokenAge: "10 minutes",
    }));
  } catch (error) {
    if (error instanceof SsoRefusal) throw error;
    throw bad(error instanceof Error ? error.message.slice(0, 200) : "unverifiable");
  }
  const events = payload.events as Record<string, unknown> | undefined;
  const event = events && typeof events === "object" ? events[BACKCHANNEL_EVENT] : undefined;
  if (!event || typeof event !== "object" || Array.isArray(event)) throw bad("no back-channel logout event");
  if ("nonce" in payload) throw bad("nonce present");
  const subject = typeof payload.sub === "string" ? payload.sub : undefined;
  const sid = typeof payload.sid === "string" ? payload.sid : undefined;
  if (!subject && !sid) throw bad("neither sub nor sid");
  if (typeof payload.jti !== "string" || !(await spendOnce("jti", `${p.id}:${payload.jti}`, Date.now() + 10 * 60_000)))
    throw bad("jti missing or replayed");
  const ended = await revokeProviderSessions(p.id, { subject, sid });
  await recordAudit({
    action: "sso.logout",
    ip: meta.ip,
    subject: `provider:${p.id}`,
    detail: { provider: p.id, sessions: ended, by: sid ? "sid" : "sub" },
  });
  return ended;
}
