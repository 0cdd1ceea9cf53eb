import { redirect } from "@remix-run/node";
import { config } from "~/config.server";
import { safeRedirect } from "~/lib/redirect";
import type { User } from "~/db/schema";
import { recordAudit } from "~/models/audit.server";
import { revokeSession, sessionUser, startSession } from "~/models/sessions.server";
import { sessionProvider } from "~/models/sso.server";
import { sha256 } from "~/lib/crypto.server";
import { actorOf, type Actor } from "~/models/actor";
import { signedCookie } from "~/web/cookies.server";
import { flashToast } from "~/web/toast.server";

/**
 * The signed-in session: the cookie holds only a random id (signed, HttpOnly; web/cookies.server.ts says how every
 * cookie is made); the session itself (expiry, revocation) lives in the database. Also the short-lived MFA
 * challenge between an e-mailed link and its code, and the acting person as the models see them.
 */
const sessionCookie = signedCookie("koala_session", { maxAgeSeconds: () => Math.floor(config().sessionMaxMs / 1000) });
const totpChallenge = signedCookie("koala_mfa", { maxAgeSeconds: () => 5 * 60 });

const policy = () => ({ idleMs: config().sessionIdleMs, maxMs: config().sessionMaxMs });

export interface RequestMeta {
  ip: string | null;
  userAgent: string | null;
}

export function requestMeta(request: Request, context?: { clientIp?: string }): RequestMeta {
  return { ip: context?.clientIp ?? null, userAgent: request.headers.get("user-agent") };
}

async function sessionId(request: Request): Promise<string | null> {
  return sessionIdFromCookie(request.headers.get("Cookie"));
}

/** The request's session id (profile: which session is "this device"), or null. */
export const currentSessionId = sessionId;

async function sessionIdFromCookie(cookieHeader: string | null): Promise<string | null> {
  const value = await sessionCookie().parse(cookieHeader);
  return typeof value === "string" && value.length > 20 ? value : null;
}

/** The signed-in user of a Cookie header (the media handler, which runs outside Remix), or null. */
export async function userFromCookie(cookieHeader: string | null): Promise<User | null> {
  const id = await sessionIdFromCookie(cookieHeader);
  return id ? sessionUser(id, policy()) : null;
}

/** What the session helpers need of Remix's load context: one object per request, and the client's address. */
export type RequestContext = { clientIp?: string };

/**
 * Memoised per request, so the layout's loader and the page's share one lookup. Keyed by the load context, the one
 * object all of a request's loaders get: each loader is handed a copy of the Request (Remix strips its own query
 * parameters into a new one), so a memo keyed by the Request looked the session up once per loader (bench P2).
 * A form posted without JavaScript runs its action and then the page's loaders in one request, with one context:
 * an action that changes who is signed in answers with a redirect (as all of ours do), and signOut forgets the
 * lookup besides.
 */
const userCache = new WeakMap<RequestContext, Promise<User | null>>();
export function getUser(request: Request, context: RequestContext): Promise<User | null> {
  let pending = userCache.get(context);
  if (!pending) {
    pending = sessionId(request).then((id) => (id ? sessionUser(id, policy()) : null));
    userCache.set(context, pending);
  }
  return pending;
}

/** Whether the request's session is still valid, without counting as activity (the periodic check must not keep an idle session alive). */
export async function sessionIsActive(request: Request): Promise<boolean> {
  const id = await sessionId(request);
  return id ? (await sessionUser(id, policy(), { touch: false })) !== null : false;
}

/** Where a signed-out person goes: the sign-in page, which brings them back here afterwards. */
function toLogin(request: Request) {
  const url = new URL(request.url);
  const back = safeRedirect(url.pathname + url.search, "");
  return redirect(back && back !== "/dashboard" ? `/login?redirectTo=${encodeURIComponent(back)}` : "/login");
}

/**
 * The signed-in user, or a redirect to /login. Until the person has accepted the Terms and Conditions every
 * signed-in page (and every post) leads to /terms first; only the terms page itself passes `pendingTerms`.
 */
export async function requireUser(request: Request, context: RequestContext, opts: { pendingTerms?: boolean } = {}): Promise<User> {
  const user = await getUser(request, context);
  if (!user) throw toLogin(request);
  if (user.terms_acknowledged_at === null && !opts.pendingTerms) {
    const url = new URL(request.url);
    const back = request.method === "GET" ? safeRedirect(url.pathname + url.search, "") : "";
    throw redirect(back && back !== "/dashboard" ? `/terms?redirectTo=${encodeURIComponent(back)}` : "/terms");
  }
  return user;
}

/** The signed-in person as the models see them, with their address (what the audit log records). */
export async function requireActor(request: Request, context: RequestContext): Promise<Actor> {
  return actorOf(await requireUser(request, context), context.clientIp || null);
}

/**
 * Starts a fresh session (a new id every sign-in; the old one, if any, is revoked) and redirects. `sso`: the provider,
 * subject and provider session a company sign-in came from.
 */
export async function signIn(
  request: Request,
  meta: RequestMeta,
  userId: number,
  redirectTo: string | null,
  method: string,
  sso: { provider: string; subject: string; sid: string | null } | null = null,
) {
  const previous = await sessionId(request);
  if (previous) await revokeSession(previous);
  const id = await startSession(userId, policy(), meta, sso);
  await recordAudit({ action: "sign_in.success", actorUserId: userId, ip: meta.ip, detail: { method } });
  const headers = new Headers();
  headers.append("Set-Cookie", await sessionCookie().serialize(id));
  headers.append("Set-Cookie", await totpChallenge().serialize("", { maxAge: 0 }));
  return redirect(safeRedirect(redirectTo), { headers });
}

/**
 * Ends the session. One that came from a company provider with a logout endpoint goes on there (`providerLogout`
 * gives its address), so that the provider's session ends too; the provider sends the person back to /login.
 */
export async function signOut(request: Request, context: RequestContext, providerLogout?: (provider: string) => Promise<string | null>) {
  const meta = requestMeta(request, context);
  const id = await sessionId(request);
  const user = await getUser(request, context);
  const provider = id ? await sessionProvider(sha256(id)) : null;
  if (id) await revokeSession(id);
  userCache.delete(context);
  if (user) await recordAudit({ action: "sign_out", actorUserId: user.id, ip: meta.ip });
  const headers = new Headers();
  headers.append("Set-Cookie", await sessionCookie().serialize("", { maxAge: 0 }));
  headers.append("Set-Cookie", await flashToast(request, { kind: "info", title: "You have been logged out." }));
  const onward = provider && providerLogout ? await providerLogout(provider) : null;
  return redirect(onward ?? "/login", { headers });
}

export async function readTotpChallenge(request: Request): Promise<string | null> {
  const v = await totpChallenge().parse(request.headers.get("Cookie"));
  return typeof v === "string" && v ? v : null;
}
export const totpChallengeCookie = (token: string) => totpChallenge().serialize(token);
