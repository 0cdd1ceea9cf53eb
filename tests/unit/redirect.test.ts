import { describe, expect, it } from "vitest";
import { safeRedirect } from "~/lib/redirect";

/** Targets an attacker can put in ?redirectTo=, ?from= or a posted redirectTo (issue 9, item 2, and the classic list). */
const HOSTILE = [
  "//evil.example",
  "///evil.example",
  "/.//evil.example",
  "/..//evil.example",
  "/%2e//evil.example",
  "/%2E%2E//evil.example",
  "/x/..//evil.example",
  "/./././/evil.example",
  "/\\evil.example",
  "/\\/evil.example",
  "\\\\evil.example",
  "https://evil.example",
  "http:evil.example",
  "javascript:alert(1)",
  "JaVaScRiPt:alert(1)",
  "data:text/html,<script>alert(1)</script>",
  "evil.example",
  "/%09/evil.example",
  "/\t/evil.example",
  "/\n/evil.example",
  "/\u0000/evil.example",
  "/login?redirectTo=//evil.example",
  "/auth/abc",
  "",
  " /dashboard",
];

describe("safeRedirect", () => {
  it.each(HOSTILE)("never leaves the site for %j", (target) => {
    const result = safeRedirect(target, "/fallback");
    expect(result.startsWith("/")).toBe(true);
    expect(result.startsWith("//")).toBe(false);
    expect(result.startsWith("/\\")).toBe(false);
    // Wherever a browser resolves it, it stays on the app's origin.
    expect(new URL(result, "https://koala.example").origin).toBe("https://koala.example");
  });

  it("falls back for the protocol-relative results of dot segments and encodings", () => {
    for (const target of ["/.//evil.example", "/..//evil.example", "/%2e//evil.example", "/x/..//evil.example"])
      expect(safeRedirect(target, "/fallback")).toBe("/fallback");
  });

  it("keeps a same-site path, normalised, with its query and fragment", () => {
    expect(safeRedirect("/client/3?after=abc&pos=60#top")).toBe("/client/3?after=abc&pos=60#top");
    expect(safeRedirect("/client/./3/../4")).toBe("/client/4");
    expect(safeRedirect("/search/keyword/shelf%20promo")).toBe("/search/keyword/shelf%20promo");
  });

  it("never sends back to the sign-in pages (no loops)", () => {
    expect(safeRedirect("/login")).toBe("/dashboard");
    expect(safeRedirect("/auth/token")).toBe("/dashboard");
  });
});
