import { config } from "~/config.server";
import { verifyPassword } from "~/lib/crypto.server";
import { matchTotpStep } from "~/lib/totp.server";
import { escapeHtml } from "~/lib/html";
import { safeRedirect } from "~/lib/redirect";
import { recordAudit } from "~/models/audit.server";
import { hitRateLimit, waitMessage } from "~/models/rate-limits.server";
import { consumeToken, issueMagicLink, issueTotpChallenge, peekToken, type SsoRef } from "~/models/sign-in-tokens.server";
import { acceptTotpStep, findUserByEmail, findUserById, normaliseEmail } from "~/models/users.server";
import type { RequestMeta } from "~/sessions.server";
import { sendMail } from "./mail.server";
import { ssoOnlyProviderFor } from "./oidc.server";

export const INVALID_CREDENTIALS = "Invalid credentials.";
export const INVALID_LINK = "This sign-in link is invalid, has expired or was already used. Please request a new one.";

/** An expected sign-in failure: a message for the person and the HTTP status to answer with. */
export class SignInError extends Error {
  constructor(
    message: string,
    public status = 400,
  ) {
    super(message);
    this.name = "SignInError";
  }
}

/**
 * Sign-in is three plain functions, one per way in (decision 0021): each checks its rate limits, its credentials and
 * the account, audits a failure, and yields the user and whether a TOTP code is still owed before a session starts.
 */
export interface SignInResult {
  userId: number;
  redirectTo: string | null;
  totpRequired: boolean;
  /** After a company sign-in: the provider session the Koala session will carry. */
  sso?: SsoRef | null;
}

/**
 * Rate limits hold per address and per client IP, in the database, so they hold across instances.
 * Every call counts one attempt.
 */
export async function enforceRateLimit(scope: string, meta: RequestMeta, email?: string) {
  const { rateLimit } = config();
  const checks = [hitRateLimit(`${scope}:ip:${meta.ip ?? "unknown"}`, rateLimit.perIp, rateLimit.windowMs)];
  if (email) checks.push(hitRateLimit(`${scope}:addr:${normaliseEmail(email)}`, rateLimit.perAddress, rateLimit.windowMs));
  const results = await Promise.all(checks);
  const blocked = results.find((r) => !r.allowed);
  if (blocked) {
    await recordAudit({ action: "sign_in.rate_limited", ip: meta.ip, subject: scope, detail: { scope } });
    throw new SignInError(`Too many sign-in attempts. ${waitMessage(blocked.retryAfterSeconds)}`, 429);
  }
}

async function failure(meta: RequestMeta, method: string, userId: number | null, reason: string): Promise<never> {
  await recordAudit({ action: "sign_in.failure", actorUserId: userId, ip: meta.ip, detail: { method, reason } });
  throw new SignInError(method === "magic_link" ? INVALID_LINK : INVALID_CREDENTIALS, 400);
}

/**
 * An address whose domain signs in only through its company's provider (OIDC_<ID>_SSO_ONLY): no password, no
 * e-mailed link, also one sent before the rule was set.
 */
async function refuseSsoOnly(email: string, meta: RequestMeta, method: string, userId: number | null) {
  const provider = await ssoOnlyProviderFor(email);
  if (!provider) return;
  await recordAudit({ action: "sign_in.failure", actorUserId: userId, ip: meta.ip, detail: { method, reason: "sso_only" } });
  throw new SignInError(`Your organisation signs in to Koala through ${provider.name}. Please use "Sign in with ${provider.name}".`, 403);
}

/** Checks a code against the user's secret and records the step, refusing a step already used. */
async function acceptCode(userId: number, secret: string, code: string) {
  const step = matchTotpStep(secret, code);
  return step !== null && (await acceptTotpStep(userId, step));
}

/** Magic link, second half: the POST from /auth/:token uses the token once. */
export async function verifyMagicLink(token: string, meta: RequestMeta): Promise<SignInResult> {
  await enforceRateLimit("auth-link", meta);
  const used = await consumeToken(token, "magic_link");
  if (!used) return failure(meta, "magic_link", null, "invalid_or_used_token");
  const user = await findUserById(used.userId);
  if (!user || user.status !== "active") return failure(meta, "magic_link", used.userId, "inactive");
  await refuseSsoOnly(user.email, meta, "magic_link", user.id);
  return { userId: user.id, redirectTo: used.redirectTo, totpRequired: user.totp_secret !== null };
}

/** E-mail, password and TOTP code in one form. */
export async function verifyPasswordTotp(
  given: { email: string; password: string; code: string; redirectTo?: string | null },
  meta: RequestMeta,
): Promise<SignInResult> {
  await enforceRateLimit("password", meta, given.email);
  await refuseSsoOnly(given.email, meta, "password_totp", null);
  const user = await findUserByEmail(given.email);
  // verifyPassword spends the same time when there is no user or no password.
  const passwordOk = await verifyPassword(given.password, user?.password_hash ?? null);
  if (!user || !passwordOk || user.status !== "active" || !user.totp_secret)
    return failure(meta, "password_totp", user?.id ?? null, "bad_password_or_account");
  if (!(await acceptCode(user.id, user.totp_secret, given.code))) return failure(meta, "password_totp", user.id, "bad_or_replayed_code");
  return { userId: user.id, redirectTo: given.redirectTo ? safeRedirect(given.redirectTo) : null, totpRequired: false };
}

/** The code owed after a magic link, for a user with TOTP enrolled; the challenge id comes from a cookie. */
export async function verifyTotpChallenge(challenge: string | null, code: string, meta: RequestMeta): Promise<SignInResult> {
  await enforceRateLimit("totp-challenge", meta);
  const pending = challenge ? await peekToken(challenge, "totp_challenge") : null;
  if (!challenge || !pending) throw new SignInError(INVALID_LINK, 400);
  await enforceRateLimit("totp-challenge-user", { ...meta, ip: `user-${pending.userId}` });
  const user = await findUserById(pending.userId);
  if (!user?.totp_secret || user.status !== "active") return failure(meta, "magic_link_totp", pending.userId, "inactive");
  if (!(await acceptCode(user.id, user.totp_secret, code))) return failure(meta, "magic_link_totp", user.id, "bad_or_replayed_code");
  if (!(await consumeToken(challenge, "totp_challenge"))) throw new SignInError(INVALID_LINK, 400);
  return { userId: user.id, redirectTo: pending.redirectTo, totpRequired: false, sso: pending.sso };
}

/** After a magic link, for a user with TOTP: a short-lived challenge the code form redeems. */
export const startTotpChallenge = (result: SignInResult) => issueTotpChallenge(result.userId, result.redirectTo, result.sso ?? null);

/**
 * Magic link, first half. Every well-formed address gets the same answer; the mail differs:
 * a sign-in link for an active account, a pointer to registration otherwise (no account enumeration).
 */
export async function requestMagicLink(email: string, redirectTo: string | null, meta: RequestMeta) {
  await enforceRateLimit("magic-link", meta, email);
  const { appUrl } = config();
  const user = await findUserByEmail(email);
  if (user && user.status === "active") {
    const token = await issueMagicLink(user.id, redirectTo ? safeRedirect(redirectTo) : null);
    const link = `${appUrl}/auth/${token}`;
    await sendMail({
      to: user.email,
      subject: "Your Koala sign-in link",
      text: `Hello ${user.name},\n\nUse this link to sign in to Koala. It works once and expires in 10 minutes:\n\n${link}\n\nIf you did not ask for it, ignore this e-mail.`,
      html: `<p>Hello ${escapeHtml(user.name)},</p><p>Use this link to sign in to Koala. It works once and expires in 10 minutes:</p><p><a href="${link}">Sign in to Koala</a></p><p>If you did not ask for it, ignore this e-mail.</p>`,
      devLink: link,
    });
  } else {
    const status = user?.status;
    const why =
      status === "pending"
        ? "Your registration is still waiting for approval; you will get an e-mail once it is approved."
        : status === "disabled"
          ? "The account for this address is disabled. Please contact your administrator."
          : `There is no Koala account for this address. To ask for one, apply at ${appUrl}/pending`;
    await sendMail({
      to: normaliseEmail(email),
      subject: "Koala sign-in",
      text: `Someone asked to sign in to Koala with this address.\n\n${why}\n\nIf it was not you, ignore this e-mail.`,
    });
  }
  await recordAudit({ action: "sign_in.link_sent", actorUserId: user?.id ?? null, ip: meta.ip, detail: { known: Boolean(user) } });
}
