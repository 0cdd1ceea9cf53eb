import { createCookie, createCookieSessionStorage, redirect } from "@remix-run/node";
import { config } from "~/config.server";
import { randomToken } from "~/lib/crypto.server";
import { safeRedirect } from "~/lib/redirect";
import type { User } from "~/db/schema";
import { recordAudit } from "~/models/audit.server";
import { revokeSession, sessionUser, startSession } from "~/models/sessions.server";
import type { Actor } from "~/models/actor";

/**
 * Every cookie Koala sets, defined here and nowhere else. Signed, HttpOnly, SameSite=Lax; in production also
 * Secure with the `__Host-` prefix. The session cookie holds only a random id; the session itself (expiry,
 * revocation) lives in the database.
 */
function cookies() {
  const cfg = config();
  const secure = cfg.production;
  const signed = (name: string, maxAge?: number) =>
    createCookie(secure ? `__Host-${name}` : name, {
      httpOnly: true,
      sameSite: "lax",
      path: "/",
      secure,
      secrets: [cfg.sessionSecret],
      ...(maxAge ? { maxAge } : {}),
    });
  return {
    session: signed("koala_session", Math.floor(cfg.sessionMaxMs / 1000)),
    totpChallenge: signed("koala_mfa", 5 * 60),
    selection: signed("koala_selection", 7 * 86_400),
    /** A share-link visitor's name for the review loop, per link: not a session (no account, no rights). */
    visitor: createCookie("koala_visitor", {
      httpOnly: true,
      sameSite: "lax",
      path: "/shared-board",
      secure,
      secrets: [cfg.sessionSecret],
      maxAge: 180 * 86_400,
    }),
    flash: createCookieSessionStorage<Record<string, never>, { toast: Toast }>({ cookie: signed("koala_flash") }),
  };
}
// Made once per configuration (tests and the CLI replace it; the secret goes with it).
let jar: { config: ReturnType<typeof config>; cookies: ReturnType<typeof cookies> } | undefined;
const cookieJar = () => {
  if (jar?.config !== config()) jar = { config: config(), cookies: cookies() };
  return jar.cookies;
};

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
  const value = await cookieJar().session.parse(cookieHeader);
  return typeof value === "string" && value.length > 20 ? value : null;
}

/** The signed-in user of a Cookie header (the media handler, which runs outside Remix), or null. */
export async function userFromCookie(cookieHeader: string | null): Promise<User | null> {
  const id = await sessionIdFromCookie(cookieHeader);
  return id ? sessionUser(id, policy()) : null;
}

/** Memoised per request, so a loader and its layout share one lookup. */
const userCache = new WeakMap<Request, Promise<User | null>>();
export function getUser(request: Request): Promise<User | null> {
  let pending = userCache.get(request);
  if (!pending) {
    pending = sessionId(request).then((id) => (id ? sessionUser(id, policy()) : null));
    userCache.set(request, pending);
  }
  return pending;
}

/** Whether the request's session is still valid, without counting as activity (the periodic check must not keep an idle session alive). */
export async function sessionIsActive(request: Request): Promise<boolean> {
  const id = await sessionId(request);
  return id ? (await sessionUser(id, policy(), { touch: false })) !== null : false;
}

export const actorOf = (user: Pick<User, "id" | "role">, ip: string | null = null): Actor => ({ id: user.id, role: user.role, ip });

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
export async function requireUser(request: Request, opts: { pendingTerms?: boolean } = {}): Promise<User> {
  const user = await getUser(request);
  if (!user) throw toLogin(request);
  if (user.terms_acknowledged_at === null && !opts.pendingTerms) {
    const url = new URL(request.url);
    const back = request.method === "GET" ? safeRedirect(url.pathname + url.search, "") : "";
    throw redirect(back && back !== "/dashboard" ? `/terms?redirectTo=${encodeURIComponent(back)}` : "/terms");
  }
  return user;
}

/** The signed-in person as the models see them; with the load context, their address too (what the audit log records). */
export async function requireActor(request: Request, context?: { clientIp?: string }): Promise<Actor> {
  return actorOf(await requireUser(request), context?.clientIp || null);
}

/** Starts a fresh session (a new id every sign-in; the old one, if any, is revoked) and redirects. */
export async function signIn(request: Request, meta: RequestMeta, userId: number, redirectTo: string | null, method: string) {
  const previous = await sessionId(request);
  if (previous) await revokeSession(previous);
  const id = await startSession(userId, policy(), meta);
  await recordAudit({ action: "sign_in.success", actorUserId: userId, ip: meta.ip, detail: { method } });
  const headers = new Headers();
  headers.append("Set-Cookie", await cookieJar().session.serialize(id));
  headers.append("Set-Cookie", await cookieJar().totpChallenge.serialize("", { maxAge: 0 }));
  return redirect(safeRedirect(redirectTo), { headers });
}

export async function signOut(request: Request, meta: RequestMeta) {
  const id = await sessionId(request);
  const user = await getUser(request);
  if (id) await revokeSession(id);
  if (user) await recordAudit({ action: "sign_out", actorUserId: user.id, ip: meta.ip });
  const headers = new Headers();
  headers.append("Set-Cookie", await cookieJar().session.serialize("", { maxAge: 0 }));
  headers.append("Set-Cookie", await flashToast(request, { kind: "info", title: "You have been logged out." }));
  return redirect("/login", { headers });
}

export async function readTotpChallenge(request: Request): Promise<string | null> {
  const v = await cookieJar().totpChallenge.parse(request.headers.get("Cookie"));
  return typeof v === "string" && v ? v : null;
}
export const totpChallengeCookie = (token: string) => cookieJar().totpChallenge.serialize(token);

/**
 * Display preferences in plain cookies holding the spec's values (`theme`, `selectedView`, `viewLayout`):
 * not secret, so not signed; read on the server so the first paint is right without script.
 */
export function preference<T extends string>(name: string, allowed: readonly T[], fallback: T) {
  const pattern = new RegExp(`(?:^|;\\s*)${name}=([^;]*)`);
  const readHeader = (cookieHeader: string | null): T => {
    const value = pattern.exec(cookieHeader ?? "")?.[1] as T | undefined;
    return value && allowed.includes(value) ? value : fallback;
  };
  return {
    read: (request: Request): T => readHeader(request.headers.get("Cookie")),
    /** The same from a Cookie header (the shared-page cache, outside Remix). */
    readHeader,
    serialize: (value: T) => `${name}=${value}; Path=/; Max-Age=${365 * 86_400}; SameSite=Lax${config().production ? "; Secure" : ""}`,
  };
}

export const THEMES = ["lightmode", "darkmode"] as const;
export type Theme = (typeof THEMES)[number];
export const themePreference = preference("theme", THEMES, "lightmode");
export const getTheme = async (request: Request): Promise<Theme> => themePreference.read(request);

export interface Toast {
  kind: "success" | "error" | "info";
  title: string;
  description?: string;
}

/** Sets a toast for the next page; it renders in the layout's live region, with or without JavaScript. */
export async function flashToast(request: Request, toast: Toast): Promise<string> {
  const storage = cookieJar().flash;
  const session = await storage.getSession(request.headers.get("Cookie"));
  session.flash("toast", toast);
  return storage.commitSession(session);
}

/** Whether a toast waits in the Cookie header (the page that shows it is not the same for everyone). */
export async function hasFlash(cookieHeader: string | null): Promise<boolean> {
  if (!cookieHeader?.includes("koala_flash=")) return false;
  return (await cookieJar().flash.getSession(cookieHeader)).has("toast");
}

export async function takeToast(request: Request): Promise<{ toast: Toast | null; setCookie: string | null }> {
  const storage = cookieJar().flash;
  const session = await storage.getSession(request.headers.get("Cookie"));
  const toast = (session.get("toast") as Toast | undefined) ?? null;
  return { toast, setCookie: toast ? await storage.commitSession(session) : null };
}

/**
 * The grid selection, kept on the server side of the form so it works without JavaScript and across pages:
 * either a list of picked ids, or "all" (the whole filtered set) minus a list of exceptions. One scope at a time.
 */
export interface Selection {
  scope: string;
  all: boolean;
  ids: number[];
}
// 300 ids keep the signed cookie well under the 4 KB browsers accept.
export const MAX_PICKED = 300;

export async function readSelection(request: Request, scope: string): Promise<Selection> {
  const v = (await cookieJar().selection.parse(request.headers.get("Cookie"))) as Selection | null;
  return v && v.scope === scope && Array.isArray(v.ids) ? v : { scope, all: false, ids: [] };
}
export const selectionCookie = (selection: Selection) => cookieJar().selection.serialize(selection);

/** A share-link visitor, as their cookie of the link names them (null until they typed a name). */
export interface LinkVisitor {
  key: string;
  name: string;
}
type Visitors = Record<string, LinkVisitor>;

export function readVisitor(request: Request, linkId: number): Promise<LinkVisitor | null> {
  return visitorOfCookie(request.headers.get("Cookie"), linkId);
}

/** The same from a Cookie header; no cookie of that name, no signature to check. */
export async function visitorOfCookie(cookieHeader: string | null, linkId: number): Promise<LinkVisitor | null> {
  if (!cookieHeader?.includes("koala_visitor=")) return null;
  const all = ((await cookieJar().visitor.parse(cookieHeader)) ?? {}) as Visitors;
  const v = all[String(linkId)];
  return v && typeof v.key === "string" && typeof v.name === "string" ? v : null;
}

/** Remembers the name a visitor typed for a link (a fresh random key the first time). */
export async function visitorCookie(request: Request, linkId: number, name: string): Promise<string> {
  const all = ((await cookieJar().visitor.parse(request.headers.get("Cookie"))) ?? {}) as Visitors;
  const key = all[String(linkId)]?.key ?? randomToken(12);
  // A handful of links at most: the oldest are dropped beyond 20, so the cookie stays small.
  const kept = Object.entries(all).slice(-19);
  return cookieJar().visitor.serialize({ ...Object.fromEntries(kept), [String(linkId)]: { key, name } });
}
