import { randomToken } from "~/lib/crypto.server";
import { signedCookie } from "./cookies.server";

/**
 * A share-link visitor's name for the review loop, per link, in a cookie of its own under /shared-board: not a
 * session (no account, no rights), only who a review is from.
 */
export interface LinkVisitor {
  key: string;
  name: string;
}
type Visitors = Record<string, LinkVisitor>;

const cookie = signedCookie("koala_visitor", { path: "/shared-board", hostPrefix: false, maxAgeSeconds: () => 180 * 86_400 });

export function readVisitor(request: Request, linkId: number): Promise<LinkVisitor | null> {
  return visitorOfCookie(request.headers.get("Cookie"), linkId);
}

/** The same from a Cookie header; no cookie of that name, no signature to check. */
export async function visitorOfCookie(cookieHeader: string | null, linkId: number): Promise<LinkVisitor | null> {
  if (!cookieHeader?.includes("koala_visitor=")) return null;
  const all = ((await cookie().parse(cookieHeader)) ?? {}) as Visitors;
  const v = all[String(linkId)];
  return v && typeof v.key === "string" && typeof v.name === "string" ? v : null;
}

/** Remembers the name a visitor typed for a link (a fresh random key the first time). */
export async function visitorCookie(request: Request, linkId: number, name: string): Promise<string> {
  const all = ((await cookie().parse(request.headers.get("Cookie"))) ?? {}) as Visitors;
  const key = all[String(linkId)]?.key ?? randomToken(12);
  // A handful of links at most: the oldest are dropped beyond 20, so the cookie stays small.
  const kept = Object.entries(all).slice(-19);
  return cookie().serialize({ ...Object.fromEntries(kept), [String(linkId)]: { key, name } });
}
