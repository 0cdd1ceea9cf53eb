import { CompiledQuery } from "kysely";
import { describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { databaseFrom, loadConfig, PG_POOL_DEFAULTS, SQLITE_CACHE_MB } from "~/config.server";
import { connect, pgPoolConfig } from "~/db/connection.server";
import { redact } from "~/lib/log.server";
import { checkOcr } from "~/services/ocr-pool.server";

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
  it("offloads media only where the store allows it: x-accel and signed with files, presigned with S3, and says which otherwise", () => {
    const base = { DATA_DIR: "/tmp/koala-cfg" };
    expect(loadConfig(base).media).toEqual({ offload: "off", accelPrefix: "/_koala-objects/", urlMs: 600_000, urlSecret: null });
    const secret = "s".repeat(32);
    expect(loadConfig({ ...base, MEDIA_OFFLOAD: "signed", MEDIA_URL_SECRET: secret }).media).toMatchObject({
      offload: "signed",
      urlSecret: secret,
    });
    expect(() => loadConfig({ ...base, MEDIA_OFFLOAD: "signed" })).toThrow(/MEDIA_URL_SECRET: required with MEDIA_OFFLOAD=signed/);
    expect(() => loadConfig({ ...base, MEDIA_OFFLOAD: "signed", MEDIA_URL_SECRET: "short" })).toThrow(/at least 32 letters/);
    expect(() => loadConfig({ ...base, MEDIA_OFFLOAD: "signed", MEDIA_URL_SECRET: `$arg_s${"x".repeat(32)}` })).toThrow(/MEDIA_URL_SECRET/);
    expect(() => loadConfig({ ...base, MEDIA_OFFLOAD: "signed", MEDIA_URL_SECRET: secret, S3_BUCKET: "b" })).toThrow(
      /signed serves files from DATA_DIR/,
    );
    expect(loadConfig({ ...base, MEDIA_OFFLOAD: "x-accel", MEDIA_ACCEL_PREFIX: "/files/" }).media.accelPrefix).toBe("/files/");
    expect(() => loadConfig({ ...base, MEDIA_OFFLOAD: "x-accel", S3_BUCKET: "b" })).toThrow(/x-accel serves files from DATA_DIR/);
    expect(() => loadConfig({ ...base, MEDIA_OFFLOAD: "presigned" })).toThrow(/presigned needs S3_BUCKET/);
    expect(loadConfig({ ...base, MEDIA_OFFLOAD: "presigned", S3_BUCKET: "b", MEDIA_URL_SECONDS: "120" }).media.urlMs).toBe(120_000);
    expect(() => loadConfig({ ...base, MEDIA_ACCEL_PREFIX: "files" })).toThrow(/MEDIA_ACCEL_PREFIX must be a path/);
    expect(() => loadConfig({ ...base, MEDIA_OFFLOAD: "sendfile" })).toThrow(/MEDIA_OFFLOAD/);
  });
  it("writes the access log by default in production only, names the instance, and asks a long metrics token", () => {
    const prod = { KOALA_ENV: "production", SESSION_SECRET: "x".repeat(32), SMTP_URL: "smtp://h", APP_URL: "https://k.example" };
    expect(loadConfig(prod).accessLog).toBe(true);
    expect(loadConfig({ ...prod, ACCESS_LOG: "off" }).accessLog).toBe(false);
    expect(loadConfig({ DATA_DIR: "/tmp/koala-cfg" }).accessLog).toBe(false);
    expect(loadConfig({ DATA_DIR: "/tmp/koala-cfg", ACCESS_LOG: "on" }).accessLog).toBe(true);
    expect(loadConfig({ DATA_DIR: "/tmp/koala-cfg" }).instanceId).toMatch(new RegExp(`-${process.pid}$`));
    expect(loadConfig({ DATA_DIR: "/tmp/koala-cfg", INSTANCE_ID: "web-2" }).instanceId).toBe("web-2");
    expect(loadConfig({ DATA_DIR: "/tmp/koala-cfg" }).metrics).toEqual({ token: undefined, port: undefined });
    expect(loadConfig({ DATA_DIR: "/tmp/koala-cfg", METRICS_TOKEN: "t".repeat(16), METRICS_PORT: "9464" }).metrics).toEqual({
      token: "t".repeat(16),
      port: 9464,
    });
    expect(() => loadConfig({ DATA_DIR: "/tmp/koala-cfg", METRICS_TOKEN: "short" })).toThrow(/METRICS_TOKEN must be at least 16/);
    expect(() => loadConfig({ DATA_DIR: "/tmp/koala-cfg", PORT: "3000", METRICS_PORT: "3000" })).toThrow(
      /METRICS_PORT: must differ from PORT/,
    );
  });
  it("reads OCR's settings: on by default with one English thread, off by OCR=off, languages as tesseract codes joined by +", () => {
    const dir = { DATA_DIR: "/tmp/koala-cfg" };
    expect(loadConfig(dir).ocr).toEqual({ concurrency: 1, languages: ["eng"] });
    expect(loadConfig({ ...dir, OCR: "off" }).ocr).toBeNull();
    expect(loadConfig({ ...dir, OCR_CONCURRENCY: "2", OCR_LANGUAGES: "eng+deu" }).ocr).toEqual({
      concurrency: 2,
      languages: ["eng", "deu"],
    });
    expect(() => loadConfig({ ...dir, OCR_LANGUAGES: "eng, ../../etc" })).toThrow(/OCR_LANGUAGES must be tesseract language codes/);
    expect(() => loadConfig({ ...dir, OCR_CONCURRENCY: "0" })).toThrow(/OCR_CONCURRENCY/);
  });
  it("stops the start naming an OCR language whose data package is not installed", () => {
    expect(() => checkOcr(["eng"])).not.toThrow();
    expect(() => checkOcr(["eng", "deu"])).toThrow(
      'OCR_LANGUAGES names "deu", but its data package @tesseract.js-data/deu is not installed.',
    );
  });
  it("reads the database URL", () => {
    expect(databaseFrom(undefined, "/d")).toEqual({ dialect: "sqlite", file: "/d/koala.sqlite" });
    expect(databaseFrom("postgres://u@h/db", "/d")).toEqual({ dialect: "postgres", url: "postgres://u@h/db" });
    expect(databaseFrom("sqlite:/x/y.db", "/d")).toEqual({ dialect: "sqlite", file: "/x/y.db" });
    expect(() => databaseFrom("mysql://x", "/d")).toThrow(/DATABASE_URL/);
  });
  it("reads the PostgreSQL pool's settings (PG_*), and where migrations run (DATABASE_DIRECT_URL)", () => {
    const url = "postgres://u@h/db";
    expect(loadConfig({ DATA_DIR: "/d", DATABASE_URL: url })).toMatchObject({
      database: { dialect: "postgres", url, pool: PG_POOL_DEFAULTS },
      migrationDatabase: null,
    });
    const cfg = loadConfig({
      DATA_DIR: "/d",
      DATABASE_URL: url,
      DATABASE_DIRECT_URL: "postgres://u@h:5433/db",
      PG_POOL_MAX: "4",
      PG_STATEMENT_TIMEOUT_MS: "0",
      PG_IDLE_TIMEOUT_MS: "1000",
      PG_CONNECT_TIMEOUT_MS: "2000",
    });
    const pool = { max: 4, statementTimeoutMs: 0, idleTimeoutMs: 1000, connectTimeoutMs: 2000, applicationName: "koala" };
    expect(cfg.database).toEqual({ dialect: "postgres", url, pool });
    expect(cfg.migrationDatabase).toEqual({ dialect: "postgres", url: "postgres://u@h:5433/db", pool });
    // No statement_timeout sent at all when it is 0 (the server's or the role's own applies).
    expect(pgPoolConfig({ dialect: "postgres", url, pool })).toEqual({
      connectionString: url,
      max: 4,
      application_name: "koala",
      idleTimeoutMillis: 1000,
      connectionTimeoutMillis: 2000,
    });
    expect(pgPoolConfig({ dialect: "postgres", url }, 1)).toMatchObject({ max: 1, statement_timeout: 30_000 });
    expect(() => loadConfig({ DATA_DIR: "/d", PG_POOL_MAX: "0" })).toThrow(/PG_POOL_MAX/);
  });
  it("gives a SQLite connection SQLITE_CACHE_MB of page cache (64 MiB unless set), not SQLite's 2 MiB", async () => {
    expect(loadConfig({ DATA_DIR: "/d" }).database).toEqual({ dialect: "sqlite", file: "/d/koala.sqlite", cacheMb: SQLITE_CACHE_MB });
    expect(loadConfig({ DATA_DIR: "/d", SQLITE_CACHE_MB: "128" }).database).toMatchObject({ cacheMb: 128 });
    expect(() => loadConfig({ DATA_DIR: "/d", SQLITE_CACHE_MB: "1" })).toThrow(/SQLITE_CACHE_MB/);
    const dir = mkdtempSync(path.join(tmpdir(), "koala-cache-"));
    try {
      for (const [cacheMb, kib] of [
        [64, 65_536],
        [undefined, SQLITE_CACHE_MB * 1024],
      ] as const) {
        const connection = connect({ dialect: "sqlite", file: path.join(dir, "cache.sqlite"), cacheMb });
        const { rows } = await connection.db.executeQuery<{ cache_size: number }>(CompiledQuery.raw("pragma cache_size"));
        expect(rows[0]!.cache_size).toBe(-kib); // negative: KiB, not pages
        await connection.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("company sign-in settings", () => {
  const base = { DATA_DIR: "/tmp/koala-cfg" };
  const acme = {
    OIDC_PROVIDERS: "Acme",
    OIDC_ACME_ISSUER: "https://login.acme.example/",
    OIDC_ACME_CLIENT_ID: "koala",
    OIDC_ACME_CLIENT_SECRET: "s3cret",
    OIDC_ACME_DOMAINS: "Acme.example, acme.co.uk",
  };
  it("reads each provider from its OIDC_<ID>_ variables, with the defaults", () => {
    expect(loadConfig({ ...base, ...acme }).oidc).toEqual({
      providers: [
        {
          id: "acme",
          name: "acme",
          issuer: "https://login.acme.example/",
          clientId: "koala",
          clientSecret: "s3cret",
          scopes: "openid email profile",
          groupsClaim: "groups",
          domains: ["acme.example", "acme.co.uk"],
          ssoOnly: false,
          newUsers: "create",
        },
      ],
      timeoutSeconds: 10,
      clockToleranceSeconds: 30,
    });
    expect(loadConfig(base).oidc.providers).toEqual([]);
  });
  it("refuses a provider it could not use, saying which variable and why", () => {
    const bad = (env: Record<string, string>) => () => loadConfig({ ...base, ...acme, ...env });
    expect(bad({ OIDC_ACME_ISSUER: "" })).toThrow(/OIDC_ACME_ISSUER: required/);
    expect(bad({ OIDC_ACME_CLIENT_ID: "" })).toThrow(/OIDC_ACME_CLIENT_ID: required/);
    expect(bad({ OIDC_ACME_DOMAINS: "" })).toThrow(/OIDC_ACME_DOMAINS: required/);
    expect(bad({ OIDC_ACME_DOMAINS: "acme.example, not a domain" })).toThrow(/"not a domain" is not a domain name/);
    expect(bad({ OIDC_ACME_NEW_USERS: "maybe" })).toThrow(/OIDC_ACME_NEW_USERS: create, register or refuse/);
    expect(bad({ OIDC_ACME_SSO_ONLY: "perhaps" })).toThrow(/OIDC_ACME_SSO_ONLY: true or false/);
    expect(bad({ OIDC_PROVIDERS: "acme,acme" })).toThrow(/an id is named twice/);
    expect(bad({ OIDC_PROVIDERS: "ac-me" })).toThrow(/OIDC_PROVIDERS: "ac-me" must be 1 to 32 lower-case letters or digits/);
    expect(
      bad({
        OIDC_PROVIDERS: "acme,beta",
        OIDC_BETA_ISSUER: "https://b.example",
        OIDC_BETA_CLIENT_ID: "k",
        OIDC_BETA_DOMAINS: "acme.example",
      }),
    ).toThrow(/a domain belongs to two providers/);
  });
  it("takes an http:// issuer outside production only", () => {
    const local = { ...acme, OIDC_ACME_ISSUER: "http://127.0.0.1:3001" };
    expect(loadConfig({ ...base, ...local }).oidc.providers[0]!.issuer).toBe("http://127.0.0.1:3001");
    expect(() =>
      loadConfig({ ...local, KOALA_ENV: "production", SESSION_SECRET: "x".repeat(32), SMTP_URL: "smtp://h", APP_URL: "https://k.example" }),
    ).toThrow(/OIDC_ACME_ISSUER: must be an https:\/\/ URL$/m);
  });
});

describe("the README's configuration table", () => {
  it("lists every variable the configuration reads", () => {
    const source = readFileSync("app/config.server.ts", "utf8");
    const schema = source.slice(source.indexOf("const EnvSchema = z.object({"), source.indexOf("\n});", source.indexOf("const EnvSchema")));
    const variables = [...schema.matchAll(/^ {2}([A-Z][A-Z0-9_]+):/gm)].map((m) => m[1]!);
    expect(variables.length).toBeGreaterThan(40);
    const rows = readFileSync("README.md", "utf8")
      .split("\n")
      .filter((line) => line.startsWith("| `"));
    expect(variables.filter((v) => !rows.some((row) => row.includes(`\`${v}\``)))).toEqual([]);
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

  it("masks a company sign-in callback's code and state, whatever their shape", () => {
    expect(redact({ path: "/auth/sso/acme/callback?code=4/0Ab.c-d&state=xyz&iss=https%3A%2F%2Fidp" })).toEqual({
      path: "/auth/sso/acme/callback?code=[token]&state=[token]&iss=https%3A%2F%2Fidp",
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
