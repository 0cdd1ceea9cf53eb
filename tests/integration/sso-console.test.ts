import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "~/db/connection.server";
import { SSO_PROVIDER_MESSAGES } from "~/lib/account-schemas";
import { SYSTEM } from "~/models/actor";
import { addGroupRole } from "~/models/sso.server";
import { findUserByEmail } from "~/models/users.server";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";
import { makeProject, makeUser } from "../helpers/fixtures";
import { CLIENT_ID, CLIENT_SECRET, CookieJar, providerEnv, signInThroughProvider, startTestProvider, type Person } from "../helpers/oidc";
import { freePort, pageText, sessionCookie, startAppServer, type RunningServer } from "../helpers/server";

/**
 * Company sign-in providers added in the admin console, over real HTTP: the form's rules, the secret sealed in the
 * database and never shown again, a sign-in through the new provider against the real OpenID Provider, a change that
 * keeps the secret, the CSP that lets a post end at it, removal, and 404 for everyone but an admin.
 */
const SESSION_SECRET = "sso-console-secret-0123456789abcdefgh";

describe.each(dialects)("company sign-in providers in the console (%s)", (dialect) => {
  let t: TestDatabase;
  let server: RunningServer;
  let base: string;
  let op: Awaited<ReturnType<typeof startTestProvider>>;
  let adminCookie: string;
  let memberCookie: string;
  let project: { id: number };
  const people = new Map<string, Person>([
    ["gina", { password: "pw-gina", email: "gina@console.test", givenName: "Gina", familyName: "Grey", groups: ["console-staff"] }],
  ]);

  const post = (url: string, fields: Record<string, string>, cookie = adminCookie) =>
    fetch(`${base}${url}`, {
      method: "POST",
      redirect: "manual",
      headers: { Cookie: cookie, "Content-Type": "application/x-www-form-urlencoded", Origin: base },
      body: new URLSearchParams(fields),
    });
  const get = (url: string, cookie = adminCookie) => fetch(`${base}${url}`, { redirect: "manual", headers: { Cookie: cookie } });
  const provider = (extra: Record<string, string> = {}) => ({
    id: "console",
    name: "Console SSO",
    issuer: op.issuer,
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    scopes: "openid email profile",
    groupsClaim: "groups",
    domains: "console.test, Console.example",
    ssoOnly: "on",
    newUsers: "create",
    ...extra,
  });
  const stored = () => db().selectFrom("sso_providers").selectAll().execute();

  beforeAll(async () => {
    t = await freshDatabase(dialect, { SESSION_SECRET });
    const admin = await makeUser("admin");
    const member = await makeUser();
    adminCookie = await sessionCookie(admin.user.id);
    memberCookie = await sessionCookie(member.user.id);
    project = await makeProject();
    await addGroupRole(SYSTEM, { provider: "console", group: "console-staff", projectId: project.id, role: "viewer" });
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    op = await startTestProvider(base, ["acme", "console"], people);
    server = await startAppServer(
      t,
      {
        SESSION_SECRET,
        APP_URL: base,
        OIDC_PROVIDERS: "acme",
        ...providerEnv("acme", op.issuer, { NAME: "Acme SSO", DOMAINS: "acme.test" }),
      },
      port,
    );
  }, 90_000);
  afterAll(async () => {
    await server?.stop();
    await op?.close();
    await t.drop();
  });

  it("is the admins' alone: 404 to anyone else, and nothing saved", async () => {
    expect((await get("/admin/sign-in/providers/new", memberCookie)).status).toBe(404);
    expect((await post("/admin/sign-in/providers/new", provider(), memberCookie)).status).toBe(404);
    expect((await get("/admin/sign-in/providers/acme")).status).toBe(404); // the environment's are not the console's
    expect(await stored()).toEqual([]);
  });

  it("refuses bad settings field by field, with the form kept (but the secret) and nothing saved", async () => {
    const cases: [Record<string, string>, string][] = [
      [{ id: "Bad Id!" }, SSO_PROVIDER_MESSAGES.id],
      [{ id: "acme" }, "This provider is set in the environment; change it there."],
      [{ issuer: "not a url" }, "required, the provider&#x27;s issuer URL"],
      [{ issuer: "ftp://idp.example" }, "must be an https:// URL"],
      [{ domains: "acme.test" }, "acme.test already signs in through Acme SSO."],
      [{ domains: "not a domain" }, "is not a domain name"],
      [{ scopes: "email profile" }, SSO_PROVIDER_MESSAGES.scopes],
      [{ name: "" }, SSO_PROVIDER_MESSAGES.name],
    ];
    for (const [change, message] of cases) {
      const res = await post("/admin/sign-in/providers/new", provider(change));
      expect(res.status, JSON.stringify(change)).toBe(400);
      const html = await res.text();
      expect(html, JSON.stringify(change)).toContain(message);
      expect(html).not.toContain(CLIENT_SECRET);
    }
    expect((await post("/admin/sign-in/providers/new", { ...provider(), newUsers: "maybe" })).status).toBe(400);
    expect(await stored()).toEqual([]);
  });

  it("adds a provider whose secret is sealed and never shown; people sign in through it; the CSP lets posts end there", async () => {
    const res = await post("/admin/sign-in/providers/new", provider());
    expect(res.status).toBe(302);
    expect(res.headers.get("Location")).toBe("/admin/sign-in");
    const [row] = await stored();
    expect(row).toMatchObject({ id: "console", domains: "console.test,console.example", sso_only: 1, new_users: "create" });
    expect(row!.client_secret_sealed).toMatch(/^v1\./);
    expect(row!.client_secret_sealed).not.toContain(CLIENT_SECRET);
    for (const page of ["/admin/sign-in", "/admin/sign-in/providers/console", "/admin/audit"]) {
      const html = await (await get(page)).text();
      expect(html, page).not.toContain(CLIENT_SECRET);
    }
    expect(await pageText(await get("/admin/sign-in/providers/console"))).toContain("A secret is saved; leave this empty to keep it.");

    const login = await fetch(`${base}/login`);
    expect(await pageText(login)).toContain("Sign in with Console SSO");
    expect(login.headers.get("Content-Security-Policy")).toContain(`form-action 'self' ${op.issuer}`);
    const { res: signedIn } = await signInThroughProvider(new CookieJar(), base, "console", "gina", "pw-gina");
    expect(signedIn.status).toBe(302);
    const gina = (await findUserByEmail("gina@console.test"))!;
    const membership = await db().selectFrom("project_members").select("role").where("user_id", "=", gina.id).executeTakeFirst();
    expect(membership?.role).toBe("viewer");
    // SSO only: the e-mail field sends the address there.
    const typed = await post("/login", { intent: "magic-link", email: "gina@console.test" }, "");
    expect(typed.headers.get("Location")).toBe("/auth/sso/console?login_hint=gina%40console.test");
  });

  it("keeps the saved secret when a change leaves the field empty, and records every change without it", async () => {
    const res = await post("/admin/sign-in/providers/console", provider({ id: "ignored", name: "Console SSO 2", clientSecret: "" }));
    expect(res.status).toBe(302);
    const [row] = await stored();
    expect(row).toMatchObject({ id: "console", name: "Console SSO 2" });
    const { res: signedIn } = await signInThroughProvider(new CookieJar(), base, "console", "gina", "pw-gina");
    expect(signedIn.status).toBe(302);
    const audit = await db().selectFrom("audit_log").select("detail").where("action", "=", "sso.provider_saved").orderBy("id").execute();
    expect(audit.map((a) => JSON.parse(a.detail).newSecret)).toEqual([true, false]);
    expect(audit.map((a) => a.detail).join()).not.toContain(CLIENT_SECRET);
    // A wrong secret saved: the provider refuses Koala at the token exchange, and the person reads why.
    await post("/admin/sign-in/providers/console", provider({ clientSecret: "wrong-secret" }));
    const refused = await signInThroughProvider(new CookieJar(), base, "console", "gina", "pw-gina");
    expect(refused.res.status).toBe(400);
    expect(await pageText(refused.res)).toContain("did not confirm who you are");
  });

  it("removes a provider with its group table; its link and its address go", async () => {
    const res = await post("/admin/sign-in/providers/console", { intent: "delete" });
    expect(res.status).toBe(302);
    expect(await stored()).toEqual([]);
    expect(await db().selectFrom("sso_group_roles").select("id").where("provider", "=", "console").execute()).toEqual([]);
    const login = await fetch(`${base}/login`);
    expect(await pageText(login)).not.toContain("Console SSO");
    expect((await fetch(`${base}/auth/sso/console`, { redirect: "manual" })).status).toBe(404);
    expect((await post("/admin/sign-in/providers/console", { intent: "delete" })).status).toBe(404);
  });
});
