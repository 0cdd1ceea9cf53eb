import { createCookie, type Cookie } from "@remix-run/node";
import { parse, serialize } from "cookie";
import { config } from "~/config.server";

/**
 * How every cookie Koala sets is made, in one place. Signed ones (the session, the MFA challenge, the toast, the
 * grid's selection, a share visitor's name) are HttpOnly, SameSite=Lax and signed with SESSION_SECRET; in production
 * also Secure with the `__Host-` prefix. Each is defined beside what it is for (sessions.server.ts, toast.server.ts,
 * selection.server.ts, share-visitor.server.ts) through `signedCookie`. Display preferences are plain cookies holding
 * the spec's values (`preference`).
 */
export function signedCookie(name: string, opts: { maxAgeSeconds?: () => number; path?: string; hostPrefix?: boolean } = {}) {
  let made: { config: ReturnType<typeof config>; cookie: Cookie } | undefined;
  // Made once per configuration (tests and the CLI replace it; the secret goes with it).
  return (): Cookie => {
    const cfg = config();
    if (made?.config === cfg) return made.cookie;
    const secure = cfg.production;
    const prefix = secure && opts.hostPrefix !== false ? "__Host-" : "";
    const maxAge = opts.maxAgeSeconds?.();
    const cookie = createCookie(`${prefix}${name}`, {
      httpOnly: true,
      sameSite: "lax",
      path: opts.path ?? "/",
      secure,
      secrets: [cfg.sessionSecret],
      ...(maxAge ? { maxAge } : {}),
    });
    made = { config: cfg, cookie };
    return cookie;
  };
}

/**
 * A display preference in a plain cookie holding one of the spec's values (`theme`, `selectedView`, `viewLayout`):
 * not secret, so not signed; read on the server so that the first paint is right without script.
 */
export function preference<T extends string>(name: string, allowed: readonly T[], fallback: T) {
  const readHeader = (cookieHeader: string | null): T => {
    const value = cookieHeader ? parse(cookieHeader)[name] : undefined;
    return value && (allowed as readonly string[]).includes(value) ? (value as T) : fallback;
  };
  return {
    read: (request: Request): T => readHeader(request.headers.get("Cookie")),
    /** The same from a Cookie header (the shared-page cache, outside Remix). */
    readHeader,
    serialize: (value: T) =>
      serialize(name, value, { path: "/", maxAge: 365 * 86_400, sameSite: "lax", secure: config().production, encode: String }),
  };
}
