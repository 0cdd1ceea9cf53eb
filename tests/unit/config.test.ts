import { describe, expect, it } from "vitest";
import { databaseFrom, loadConfig } from "~/config.server";
import { redact } from "~/lib/log.server";

describe("configuration", () => {
  it("refuses to start in production without a session secret, SMTP and a public URL", () => {
    expect(() => loadConfig({ NODE_ENV: "production", DATA_DIR: "/tmp/x" })).toThrow(
      /SESSION_SECRET is required[\s\S]*SMTP_URL is required[\s\S]*APP_URL is required/,
    );
    expect(() =>
      loadConfig({ KOALA_ENV: "production", SESSION_SECRET: "x".repeat(32), SMTP_URL: "smtp://h", APP_URL: "https://k.example" }),
    ).not.toThrow();
  });
  it("treats NODE_ENV=production as production unless KOALA_ENV says otherwise", () => {
    expect(loadConfig({ NODE_ENV: "production", KOALA_ENV: "development", DATA_DIR: "/tmp/koala-cfg" }).production).toBe(false);
  });
  it("refuses a short secret and a bad number with a clear message", () => {
    expect(() => loadConfig({ SESSION_SECRET: "short", DATA_DIR: "/tmp/koala-cfg" })).toThrow(
      /SESSION_SECRET must be at least 32 characters/,
    );
    expect(() => loadConfig({ PORT: "abc", DATA_DIR: "/tmp/koala-cfg" })).toThrow(/PORT/);
  });
  it("reads the database URL", () => {
    expect(databaseFrom(undefined, "/d")).toEqual({ dialect: "sqlite", file: "/d/koala.sqlite" });
    expect(databaseFrom("postgres://u@h/db", "/d")).toEqual({ dialect: "postgres", url: "postgres://u@h/db" });
    expect(databaseFrom("sqlite:/x/y.db", "/d")).toEqual({ dialect: "sqlite", file: "/x/y.db" });
    expect(() => databaseFrom("mysql://x", "/d")).toThrow(/DATABASE_URL/);
  });
});

describe("log redaction", () => {
  it("never writes secrets, at any depth", () => {
    expect(
      redact({ email: "a@b.co", password: "p", nested: { token: "t", sessionCookie: "c", list: [{ code: "123456" }] }, ok: 1 }),
    ).toEqual({
      email: "a@b.co",
      password: "[redacted]",
      nested: { token: "[redacted]", sessionCookie: "[redacted]", list: [{ code: "[redacted]" }] },
      ok: 1,
    });
  });

  it("masks the tokens in logged paths and URLs: share links and sign-in links, not ids or board ids", () => {
    const token = "GKkW4X5AVN4JYNnnm5ybDOtBlhGNWuZQPKfEYt17O0c";
    expect(
      redact({
        path: `/shared-board/T7nenmUQuxrr:${token}/image/164`,
        url: `http://x.test/auth/${token}?next=/client/12`,
        detail: { path: `/shared-media/T7nenmUQuxrr:${token}/1/thumbs~ab~cd~x.webp` },
      }),
    ).toEqual({
      path: "/shared-board/T7nenmUQuxrr:[token]/image/164",
      url: "http://x.test/auth/[token]?next=/client/12",
      detail: { path: "/shared-media/T7nenmUQuxrr:[token]/1/thumbs~ab~cd~x.webp" },
    });
  });
});
