import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashPassword } from "~/lib/crypto.server";
import { totpCode } from "~/lib/totp.server";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";
import { startSmtp } from "../helpers/smtp";
import { makeUser } from "../helpers/fixtures";
import { startExpectingExit, startServer, type RunningServer } from "../helpers/server";

/**
 * The built server with KOALA_ENV=production and a complete, safe configuration (a real SMTP server started
 * here), over real HTTP; and its refusal to start when the configuration is not safe.
 */
const SESSION_SECRET = "production-test-secret-0123456789abcdef0123";
const TOTP_SECRET = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP";
const HSTS = "max-age=31536000; includeSubDomains";

let smtp: Awaited<ReturnType<typeof startSmtp>>;
let smtpUrl: string;
beforeAll(async () => {
  smtp = await startSmtp([]);
  smtpUrl = `smtp://127.0.0.1:${smtp.port}`;
});
afterAll(() => smtp.close());

const productionEnv = () => ({
  KOALA_ENV: "production",
  SESSION_SECRET,
  SMTP_URL: smtpUrl,
  APP_URL: "https://koala.example",
});

/** Each Set-Cookie of a response, as sent. */
const setCookies = (res: Response) => res.headers.getSetCookie();

describe.each(dialects)("production mode (%s)", (dialect) => {
  let t: TestDatabase;
  let server: RunningServer;
  let email: string;
  beforeAll(async () => {
    t = await freshDatabase(dialect);
    const { user } = await makeUser("user", {
      status: "active",
      password_hash: await hashPassword("pw-prod-123"),
      totp_secret: TOTP_SECRET,
      terms_acknowledged_at: Date.now(),
    });
    email = user.email;
    server = await startServer({ ...productionEnv(), DATA_DIR: t.dataDir, DATABASE_URL: t.url });
  }, 90_000);
  afterAll(async () => {
    await server?.stop();
    await t.drop();
  });

  it("signs in with a __Host- session cookie that is Secure, HttpOnly and SameSite=Lax, and the session works", async () => {
    const res = await fetch(`${server.base}/login?method=password`, {
      method: "POST",
      body: new URLSearchParams({ intent: "mfa", email, password: "pw-prod-123", code: totpCode(TOTP_SECRET) }),
      redirect: "manual",
    });
    expect(res.status).toBe(302);
    expect(res.headers.get("Location")).toBe("/dashboard");
    const cookies = setCookies(res);
    const session = cookies.find((c) => c.startsWith("__Host-koala_session="));
    expect(session).toBeDefined();
    expect(session).toMatch(/; Secure/i);
    expect(session).toMatch(/; HttpOnly/i);
    expect(session).toMatch(/; SameSite=Lax/i);
    expect(session).toMatch(/; Path=\//i);
    expect(session).not.toMatch(/; Domain=/i); // __Host- forbids it
    // No cookie of the app goes out without Secure, and the session never under its development name.
    for (const c of cookies) expect(c, c.split("=")[0]).toMatch(/; Secure/i);
    expect(cookies.some((c) => c.startsWith("koala_session="))).toBe(false);

    const dashboard = await fetch(`${server.base}/dashboard`, { headers: { Cookie: session!.split(";")[0]! }, redirect: "manual" });
    expect(dashboard.status).toBe(200);
  });

  it("sends HSTS on every response, pages and health check alike", async () => {
    for (const p of ["/login", "/healthz", "/no/such/page"]) {
      const res = await fetch(`${server.base}${p}`, { redirect: "manual" });
      expect(res.headers.get("Strict-Transport-Security"), p).toBe(HSTS);
    }
  });

  it("hides the development mailbox", async () => {
    expect((await fetch(`${server.base}/dev/mailbox`, { redirect: "manual" })).status).toBe(404);
  });
});

describe("production mode refuses an unsafe configuration", () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), "koala-prod-"));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  const refusals: [string, Record<string, string | undefined>, RegExp][] = [
    ["without SESSION_SECRET", { SESSION_SECRET: undefined }, /SESSION_SECRET is required in production/],
    ["without SMTP_URL", { SMTP_URL: undefined }, /SMTP_URL is required in production/],
    ["without APP_URL", { APP_URL: undefined }, /APP_URL is required in production/],
    ["with a SESSION_SECRET under 32 characters", { SESSION_SECRET: "too-short" }, /SESSION_SECRET must be at least 32 characters/],
  ];
  it.each(refusals)("does not start %s, and says which setting is wrong", { timeout: 60_000 }, async (_name, change, message) => {
    // undefined removes the variable (also from what the test's own environment would pass on).
    const { code, output } = await startExpectingExit({ ...productionEnv(), DATA_DIR: dataDir, ...change });
    expect(code).not.toBe(0);
    expect(output).toMatch(message);
    for (const [, , other] of refusals) if (other !== message) expect(output).not.toMatch(other);
  });
});
