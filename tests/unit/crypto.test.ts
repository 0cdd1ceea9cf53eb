import { describe, expect, it } from "vitest";
import { hashPassword, openSecret, randomToken, sealSecret, verifyPassword } from "~/lib/crypto.server";
import { safeRedirect } from "~/lib/redirect";

describe("passwords", () => {
  it("hash with scrypt and a random salt, and verify", async () => {
    const a = await hashPassword("correct horse");
    const b = await hashPassword("correct horse");
    expect(a).toMatch(/^scrypt\$32768\$8\$1\$/);
    expect(a).not.toBe(b);
    expect(await verifyPassword("correct horse", a)).toBe(true);
    expect(await verifyPassword("correct hors", a)).toBe(false);
    expect(await verifyPassword("anything", null)).toBe(false);
    expect(await verifyPassword("anything", "garbage")).toBe(false);
  });
});

describe("tokens", () => {
  it("carry 256 bits, URL-safe", () => {
    const t = randomToken();
    expect(t).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(new Set(Array.from({ length: 100 }, () => randomToken())).size).toBe(100);
  });
});

describe("safeRedirect", () => {
  it.each([
    ["/client/4?x=1#top", "/client/4?x=1#top"],
    ["/dashboard", "/dashboard"],
    [null, "/dashboard"],
    ["https://evil.example/", "/dashboard"],
    ["//evil.example/", "/dashboard"],
    ["/\\evil.example", "/dashboard"],
    ["/%5Cevil.example", "/%5Cevil.example"],
    ["javascript:alert(1)", "/dashboard"],
    ["/login?redirectTo=/x", "/dashboard"],
    ["/auth/abc", "/dashboard"],
    ["/ok\nSet-Cookie: x", "/dashboard"],
  ])("%j gives %j", (input, expected) => {
    expect(safeRedirect(input)).toBe(expected);
  });
});

describe("sealed secrets", () => {
  const master = "m".repeat(40);
  it("open with the same master secret and purpose only, and differ each time", () => {
    const a = sealSecret("client-secret", master, "sso client secret");
    expect(a).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(a).not.toContain("client-secret");
    expect(sealSecret("client-secret", master, "sso client secret")).not.toBe(a);
    expect(openSecret(a, master, "sso client secret")).toBe("client-secret");
    expect(openSecret(a, "n".repeat(40), "sso client secret")).toBeNull();
    expect(openSecret(a, master, "another purpose")).toBeNull();
  });
  it("refuse a sealed value that was tampered with or is not one", () => {
    const [v, iv, tag, body] = sealSecret("client-secret", master, "p").split(".");
    const flipped = Buffer.from(body!, "base64url");
    flipped[0] = flipped[0]! ^ 1;
    expect(openSecret([v, iv, tag, flipped.toString("base64url")].join("."), master, "p")).toBeNull();
    for (const junk of ["", "v1", "v2.a.b.c", "v1.!!.??.", "plain text"]) expect(openSecret(junk, master, "p")).toBeNull();
  });
});
