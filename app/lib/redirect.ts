/**
 * A post-sign-in destination, accepted only as a same-site absolute path.
 * Anything else (other hosts, protocol-relative //host, backslash tricks, control characters) gives the fallback.
 */
export function safeRedirect(to: FormDataEntryValue | string | null | undefined, fallback = "/dashboard"): string {
  if (typeof to !== "string" || !to.startsWith("/") || to.startsWith("//") || to.startsWith("/\\")) return fallback;
  if (/[\u0000-\u001f\\]/.test(to)) return fallback;
  try {
    const url = new URL(to, "http://koala.invalid");
    if (url.origin !== "http://koala.invalid") return fallback;
    if (url.pathname === "/login" || url.pathname.startsWith("/auth/")) return fallback;
    return url.pathname + url.search + url.hash;
  } catch {
    return fallback;
  }
}
