const BASE = "http://koala.invalid";

/**
 * The one check for every place that takes a destination from a request (sign-in's `redirectTo`, the image
 * page's Back link, the theme switch): the target is resolved against the app's own origin, must stay on it,
 * and comes back as a normalised path. Anything else gives the fallback: other hosts, protocol-relative `//host`
 * (also when dot segments or `%2e` produce it, as in `/.//evil.example`), backslashes, control characters, and
 * the sign-in pages themselves (no loops).
 */
export function safeRedirect(to: FormDataEntryValue | string | null | undefined, fallback = "/dashboard"): string {
  if (typeof to !== "string" || to.length > 2000 || !to.startsWith("/")) return fallback;
  if (/[\p{Cc}\\]/u.test(to)) return fallback;
  let url: URL;
  try {
    url = new URL(to, BASE);
  } catch {
    return fallback;
  }
  if (url.origin !== BASE) return fallback;
  const target = url.pathname + url.search + url.hash;
  // After normalisation the path must still read as a path on this site, not as "//other-host".
  if (!target.startsWith("/") || target.startsWith("//") || target.startsWith("/\\")) return fallback;
  if (url.pathname === "/login" || url.pathname.startsWith("/auth/")) return fallback;
  return target;
}
