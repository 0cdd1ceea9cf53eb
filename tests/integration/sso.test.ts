import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "~/db/connection.server";
import { SYSTEM } from "~/models/actor";
import { issueMagicLink } from "~/models/sign-in-tokens.server";
import { addGroupRole, removeGroupRole } from "~/models/sso.server";
import { totpCode } from "~/lib/totp.server";
import { countUsers, findUserByEmail } from "~/models/users.server";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";
import { makeProject, makeUser } from "../helpers/fixtures";
import {
  CLIENT_ID,
  CookieJar,
  providerEnv,
  signInThroughProvider,
  startHostileProvider,
  startSilentServer,
  startTestProvider,
  type Person,
} from "../helpers/oidc";
import { freePort, pageText, sessionCookie, startAppServer, type RunningServer } from "../helpers/server";

/**
 * Company sign-in over real HTTP: the built server, a real OpenID Provider (`oidc-provider`) on loopback with people
 * and groups, and a hostile provider that forges ID tokens and logout tokens. Each bad input gets a clear page (or a
 * 400 for a logout token), one audit entry and one log line, and creates nothing.
 */
const SESSION_SECRET = "sso-http-secret-0123456789abcdefghij";

describe.each(dialects)("company sign-in over HTTP (%s)", (dialect) => {
  let t: TestDatabase;
  let server: RunningServer;
  let base: string;
  let op: Awaited<ReturnType<typeof startTestProvider>>;
  let evil: Awaited<ReturnType<typeof startHostileProvider>>;
  let silent: Awaited<ReturnType<typeof startSilentServer>>;
  let research: { id: number };
  let packaging: { id: number };
  let unrelated: { id: number };
  let admin: { user: { id: number; email: string } };
  const people = new Map<string, Person>([
    ["alice", { password: "pw-alice", email: "alice@acme.test", givenName: "Alice", familyName: "Archer", groups: ["koala-editors"] }],
    ["bob", { password: "pw-bob", email: "bob@acme.test", givenName: "Bob", familyName: "Baker", groups: ["koala-viewers"] }],
    ["carol", { password: "pw-carol", email: "carol@acme.test", givenName: "Carol", familyName: "Cole", groups: ["marketing"] }],
    [
      "dave",
      {
        password: "pw-dave",
        email: "dave@acme.test",
        emailVerified: false,
        givenName: "Dave",
        familyName: "Dunn",
        groups: ["koala-editors"],
      },
    ],
    ["erin", { password: "pw-erin", email: "erin@elsewhere.test", givenName: "Erin", familyName: "East", groups: ["koala-editors"] }],
    ["frank", { password: "pw-frank", email: "frank@acme.test", givenName: "Frank", familyName: "Fox", groups: ["koala-editors"] }],
  ]);

  /** What must not change when a sign-in is refused. */
  const counts = async () => ({
    users: await countUsers(),
    identities: Number(
      (
        await db()
          .selectFrom("sso_identities")
          .select((eb) => eb.fn.countAll().as("n"))
          .executeTakeFirstOrThrow()
      ).n,
    ),
    members: Number(
      (
        await db()
          .selectFrom("project_members")
          .select((eb) => eb.fn.countAll().as("n"))
          .executeTakeFirstOrThrow()
      ).n,
    ),
    sessions: Number(
      (
        await db()
          .selectFrom("sessions")
          .select((eb) => eb.fn.countAll().as("n"))
          .executeTakeFirstOrThrow()
      ).n,
    ),
  });
  const refusals = async () =>
    (await db().selectFrom("audit_log").select(["detail"]).where("action", "=", "sso.refused").orderBy("id").execute()).map(
      (r) => JSON.parse(r.detail) as Record<string, string>,
    );
  const roleIn = async (userId: number, projectId: number) =>
    (
      await db()
        .selectFrom("project_members")
        .select("role")
        .where("user_id", "=", userId)
        .where("project_id", "=", projectId)
        .executeTakeFirst()
    )?.role ?? null;
  /** The hostile provider's round: Koala's link, the provider's instant redirect back, and Koala's answer. */
  const evilSignIn = async (jar = new CookieJar(), providerId = "evil") => {
    const out = await jar.follow(`${base}/auth/sso/${providerId}`, {}, (url) => url.startsWith(base));
    const callback = out.url;
    return { res: await jar.fetch(callback), callback, jar };
  };
  /** Expects a refusal: the status, the message on the page, the reason audited once, a log line, nothing created. */
  /**
   * Expects a refusal: the status, the message on the page, one log line, nothing created, and the audit entry
   * (`detail` its reason and what else it must say; `null`: not audited, as for a callback nobody started).
   */
  const expectRefused = async (
    run: () => Promise<Response>,
    status: number,
    message: RegExp,
    reason: string,
    detail: Record<string, string | RegExp> | null = {},
  ) => {
    const before = await counts();
    const audited = (await refusals()).length;
    const logged = server.output().split("sso sign-in refused").length;
    const res = await run();
    expect(res.status).toBe(status);
    expect(res.headers.getSetCookie().join()).not.toMatch(/koala_session=[^;]/);
    const text = await pageText(res);
    expect(text).toContain("Sign-in not completed");
    expect(text).toMatch(message);
    expect(await counts()).toEqual(before);
    const audit = (await refusals()).slice(audited);
    if (detail === null) expect(audit).toEqual([]);
    else {
      expect(audit.map((a) => a.reason)).toEqual([reason]);
      for (const [key, want] of Object.entries(detail)) expect(audit[0]![key]).toMatch(want);
    }
    await expect.poll(() => server.output().split("sso sign-in refused").length).toBe(logged + 1);
    return text;
  };

  beforeAll(async () => {
    t = await freshDatabase(dialect, { SESSION_SECRET });
    admin = await makeUser("admin");
    research = await makeProject();
    packaging = await makeProject();
    unrelated = await makeProject();
    for (const [group, projectId, role] of [
      ["koala-editors", research.id, "editor"],
      ["koala-viewers", research.id, "viewer"],
      ["koala-editors", packaging.id, "editor"],
    ] as const)
      await addGroupRole(SYSTEM, { provider: "acme", group, projectId, role });
    await addGroupRole(SYSTEM, { provider: "evil", group: "evil-editors", projectId: research.id, role: "editor" });
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    op = await startTestProvider(base, "acme", people);
    evil = await startHostileProvider(base, "evil");
    silent = await startSilentServer();
    const closedPort = await freePort();
    server = await startAppServer(
      t,
      {
        SESSION_SECRET,
        APP_URL: base,
        RATE_LIMIT_PER_IP: "10000",
        OIDC_PROVIDERS: "acme,evil,queue,down,slow",
        OIDC_TIMEOUT_SECONDS: "3",
        ...providerEnv("acme", op.issuer, { NAME: "Acme SSO", DOMAINS: "acme.test", SSO_ONLY: "true" }),
        ...providerEnv("evil", evil.issuer, { NAME: "Evil", DOMAINS: "evil.test" }),
        // The hostile provider again, as one that sends new people to the application form, its domain SSO only.
        ...providerEnv("queue", evil.issuer, { NAME: "Queue SSO", DOMAINS: "queue.test", NEW_USERS: "register", SSO_ONLY: "true" }),
        ...providerEnv("down", `http://127.0.0.1:${closedPort}`, { NAME: "Down", DOMAINS: "down.test" }),
        ...providerEnv("slow", silent.url, { NAME: "Slow", DOMAINS: "slow.test" }),
      },
      port,
    );
  }, 90_000);
  afterAll(async () => {
    await server?.stop();
    await op?.close();
    await evil?.close();
    await silent?.close();
    await t.drop();
  });

  it("shows every provider on /login as a plain link that redirects to it with PKCE, state and nonce", async () => {
    const login = await pageText(await fetch(`${base}/login`));
    expect(login).toContain("Sign in with Acme SSO");
    expect(login).toContain('href="/auth/sso/acme"');
    const res = await fetch(`${base}/auth/sso/acme?redirectTo=/projects`, { redirect: "manual" });
    expect(res.status).toBe(302);
    const to = new URL(res.headers.get("Location")!);
    expect(to.origin).toBe(op.issuer);
    expect(to.searchParams.get("code_challenge_method")).toBe("S256");
    expect(to.searchParams.get("redirect_uri")).toBe(`${base}/auth/sso/acme/callback`);
    for (const p of ["state", "nonce", "code_challenge"]) expect(to.searchParams.get(p)?.length).toBeGreaterThanOrEqual(43);
    expect(res.headers.getSetCookie().join()).toMatch(/koala_sso=.+HttpOnly; SameSite=Lax/);
    expect((await fetch(`${base}/auth/sso/nope`)).status).toBe(404);
  });

  it("makes the account on a first sign-in, with its name and the roles its groups give, and lands on the page asked for", async () => {
    const jar = new CookieJar();
    const { res } = await signInThroughProvider(
      jar,
      base,
      "acme",
      "alice",
      "pw-alice",
      `?redirectTo=${encodeURIComponent("/projects?x=1")}`,
    );
    expect(res.status).toBe(302);
    expect(res.headers.get("Location")).toBe("/projects?x=1");
    const alice = (await findUserByEmail("alice@acme.test"))!;
    expect(alice).toMatchObject({ name: "Alice", surname: "Archer", status: "active", role: "user", password_hash: null });
    expect(await roleIn(alice.id, research.id)).toBe("editor");
    expect(await roleIn(alice.id, packaging.id)).toBe("editor");
    expect(await roleIn(alice.id, unrelated.id)).toBeNull();
    const session = await db().selectFrom("sessions").selectAll().where("user_id", "=", alice.id).executeTakeFirstOrThrow();
    expect(session).toMatchObject({ sso_provider: "acme", sso_subject: "alice", revoked_at: null });
    expect(session.sso_sid).toBeTruthy();
    const actions = await db()
      .selectFrom("audit_log")
      .select(["action", "detail"])
      .where("actor_user_id", "=", alice.id)
      .orderBy("id")
      .execute();
    expect(actions.map((a) => a.action)).toEqual(["sso.account_created", "sso.role_changed", "sso.role_changed", "sign_in.success"]);
    expect(JSON.parse(actions.at(-1)!.detail)).toEqual({ method: "oidc:acme" });
    // The session works: a new account is asked to accept the terms first.
    const page = await jar.fetch(`${base}/dashboard`);
    expect(page.status).toBe(302);
    expect(page.headers.get("Location")).toMatch(/^\/terms/);
  });

  it("updates the name and the roles from the groups at the next sign-in, and leaves projects no group governs alone", async () => {
    const bob = people.get("bob")!;
    await signInThroughProvider(new CookieJar(), base, "acme", "bob", "pw-bob");
    const user = (await findUserByEmail("bob@acme.test"))!;
    expect(await roleIn(user.id, research.id)).toBe("viewer");
    expect(await roleIn(user.id, packaging.id)).toBeNull();
    // An admin adds Bob to a project no group is mapped to; the provider moves him to the editors and renames him.
    await db()
      .insertInto("project_members")
      .values({ project_id: unrelated.id, user_id: user.id, role: "manager", created_at: Date.now() })
      .execute();
    bob.groups = ["koala-editors"];
    bob.familyName = "Baker-Smith";
    const { res } = await signInThroughProvider(new CookieJar(), base, "acme", "bob", "pw-bob");
    expect(res.status).toBe(302);
    expect(await roleIn(user.id, research.id)).toBe("editor");
    expect(await roleIn(user.id, packaging.id)).toBe("editor");
    expect(await roleIn(user.id, unrelated.id)).toBe("manager");
    expect((await findUserByEmail("bob@acme.test"))!.surname).toBe("Baker-Smith");
    const changes = await db()
      .selectFrom("audit_log")
      .select("detail")
      .where("action", "=", "sso.role_changed")
      .where("actor_user_id", "=", user.id)
      .orderBy("id")
      .execute();
    expect(changes.map((c) => JSON.parse(c.detail))).toEqual([
      { provider: "acme", project: research.id, from: null, to: "viewer" },
      { provider: "acme", project: research.id, from: "viewer", to: "editor" },
      { provider: "acme", project: packaging.id, from: null, to: "editor" },
    ]);
    // Out of every Koala group: the governed memberships go; the admin's stays, so Bob still gets in.
    bob.groups = [];
    await signInThroughProvider(new CookieJar(), base, "acme", "bob", "pw-bob");
    expect(await roleIn(user.id, research.id)).toBeNull();
    expect(await roleIn(user.id, unrelated.id)).toBe("manager");
  });

  it("refuses a person whose groups map to nothing, names the admins to ask, and creates nothing", async () => {
    const text = await expectRefused(
      async () => (await signInThroughProvider(new CookieJar(), base, "acme", "carol", "pw-carol")).res,
      403,
      /none of your groups gives access to a Koala project/,
      "no_group",
    );
    expect(text).toContain(admin.user.email);
    expect(await findUserByEmail("carol@acme.test")).toBeUndefined();
  });

  it("keeps a disabled account disabled whatever the provider says", async () => {
    const user = await makeUser("user", { email: "frank@acme.test", status: "disabled" });
    await expectRefused(
      async () => (await signInThroughProvider(new CookieJar(), base, "acme", "frank", "pw-frank")).res,
      403,
      /disabled/,
      "disabled",
    );
    expect((await findUserByEmail("frank@acme.test"))!.status).toBe("disabled");
    expect(await roleIn(user.user.id, research.id)).toBeNull();
  });

  it("refuses an unverified e-mail claim and an address outside the provider's domains", async () => {
    await expectRefused(
      async () => (await signInThroughProvider(new CookieJar(), base, "acme", "dave", "pw-dave")).res,
      403,
      /did not give a confirmed e-mail address/,
      "email_unverified",
    );
    await expectRefused(
      async () => (await signInThroughProvider(new CookieJar(), base, "acme", "erin", "pw-erin")).res,
      403,
      /does not sign in erin@elsewhere\.test through Acme SSO/,
      "domain",
    );
  });

  it("refuses a replayed callback, a used code in another sign-in, a wrong state, and a callback nobody started", async () => {
    const jar = new CookieJar();
    const first = await signInThroughProvider(jar, base, "acme", "alice", "pw-alice");
    expect(first.res.status).toBe(302);
    // The same callback again (code and state), with the transaction cookie saved from before it was cleared.
    const replayJar = new CookieJar();
    const start = await replayJar.follow(`${base}/auth/sso/acme`);
    const done = await replayJar.follow(start.url, { form: { login: "alice", password: "pw-alice" } }, (url) => url.startsWith(base));
    const saved = replayJar.get(base, "koala_sso")!;
    expect((await replayJar.fetch(done.url)).status).toBe(302);
    await expectRefused(
      async () => fetch(done.url, { redirect: "manual", headers: { Cookie: `koala_sso=${saved}` } }),
      400,
      /expired or was already used/,
      "expired_or_replayed",
      { why: "state_replayed" },
    );
    // A new sign-in answered with the first one's code: used already, and bound to the first one's PKCE verifier, so
    // the provider refuses it at the token exchange.
    const replay = new CookieJar();
    const fresh = await replay.fetch(`${base}/auth/sso/acme`);
    const state = new URL(fresh.headers.get("Location")!).searchParams.get("state")!;
    const oldCode = new URL(first.callbackUrl).searchParams.get("code")!;
    await expectRefused(
      () =>
        replay.fetch(
          `${base}/auth/sso/acme/callback?code=${encodeURIComponent(oldCode)}&state=${state}&iss=${encodeURIComponent(op.issuer)}`,
        ),
      400,
      /did not confirm who you are/,
      "token_invalid",
      { error: /invalid_grant/ },
    );
    const other = new CookieJar();
    await other.fetch(`${base}/auth/sso/acme`);
    await expectRefused(
      () => other.fetch(`${base}/auth/sso/acme/callback?code=x&state=forged`),
      400,
      /expired or was already used/,
      "expired_or_replayed",
      {
        why: "state_mismatch",
      },
    );
    // Nobody started this one (a bookmark, a crawler): the same page, a log line, no audit entry.
    await expectRefused(
      () => fetch(`${base}/auth/sso/acme/callback?code=x&state=y`, { redirect: "manual" }),
      400,
      /expired or was already used/,
      "expired_or_replayed",
      null,
    );
    // The provider's own refusal: its error code when it is a known one, never text of the sender's choosing.
    const cancelled = new CookieJar();
    const started = await cancelled.fetch(`${base}/auth/sso/acme`);
    const st = new URL(started.headers.get("Location")!).searchParams.get("state")!;
    await expectRefused(
      () => cancelled.fetch(`${base}/auth/sso/acme/callback?error=access_denied&state=${st}`),
      400,
      /Acme SSO did not sign you in \(access_denied\)/,
      "provider_error",
    );
    await cancelled.fetch(`${base}/auth/sso/acme`);
    const text = await expectRefused(
      () => cancelled.fetch(`${base}/auth/sso/acme/callback?error=${encodeURIComponent("Call +1 555 0100 for help")}&state=x`),
      400,
      /did not sign you in \(error\)/,
      "provider_error",
    );
    expect(text).not.toContain("555");
  });

  it("refuses forged ID tokens: another key, alg none, wrong audience or issuer, expired, not yet valid, wrong nonce", async () => {
    const cases: [string, Partial<typeof evil.state>][] = [
      ["another key", { sign: "otherKey" }],
      ["alg none", { sign: "none" }],
      ["wrong audience", { claims: { aud: "someone-else" } }],
      ["wrong issuer", { claims: { iss: "http://127.0.0.1:1" } }],
      ["expired", { claims: { exp: Math.floor(Date.now() / 1000) - 3600, iat: Math.floor(Date.now() / 1000) - 7200 } }],
      ["not yet valid", { claims: { nbf: Math.floor(Date.now() / 1000) + 3600 } }],
      ["issued in the future", { claims: { iat: Math.floor(Date.now() / 1000) + 3600, exp: Math.floor(Date.now() / 1000) + 7200 } }],
      ["wrong nonce", { claims: { nonce: "not-the-one" } }],
    ];
    for (const [what, set] of cases) {
      Object.assign(evil.state, { claims: {}, sign: "good" }, set);
      await expectRefused(async () => (await evilSignIn()).res, 400, /did not confirm who you are/, "token_invalid").catch((e: Error) => {
        throw new Error(`${what}: ${e.message}`);
      });
    }
    Object.assign(evil.state, { claims: {}, sign: "good" });
    expect(await findUserByEmail("mallory@evil.test")).toBeUndefined();
  });

  it("takes Entra ID's xms_edov as the address's confirmation, and nothing less", async () => {
    try {
      Object.assign(evil.state, {
        sign: "good",
        claims: { email: "lou@evil.test", email_verified: undefined, xms_edov: false, sub: "lou" },
      });
      await expectRefused(async () => (await evilSignIn()).res, 403, /did not give a confirmed e-mail address/, "email_unverified");
      evil.state.claims = { email: "lou@evil.test", email_verified: "true", sub: "lou" };
      await expectRefused(async () => (await evilSignIn()).res, 403, /did not give a confirmed e-mail address/, "email_unverified");
      evil.state.claims = { email: "lou@evil.test", email_verified: undefined, xms_edov: true, sub: "lou" };
      expect((await evilSignIn()).res.status).toBe(302);
      expect(await findUserByEmail("lou@evil.test")).toBeTruthy();
    } finally {
      evil.state.claims = {};
    }
  });

  /** One round through the hostile provider with these claims on top of its defaults (then back to them). */
  const evilWith = async (claims: Record<string, unknown>, jar = new CookieJar()) => {
    Object.assign(evil.state, { sign: "good", claims });
    try {
      return await evilSignIn(jar);
    } finally {
      evil.state.claims = {};
    }
  };
  const claimsOf = (sub: string, email: string, extra: Record<string, unknown> = {}) => ({ sub, email, ...extra });

  it("takes a groups claim sent as one name; without a groups claim makes no account and changes no role", async () => {
    expect((await evilWith(claimsOf("gs", "gs@evil.test", { groups: "evil-editors" }))).res.status).toBe(302);
    const gs = (await findUserByEmail("gs@evil.test"))!;
    expect(await roleIn(gs.id, research.id)).toBe("editor");
    await expectRefused(
      async () => (await evilWith(claimsOf("gm", "gm@evil.test", { groups: undefined }))).res,
      403,
      /did not say which groups you are in/,
      "groups_missing",
    );
    // Known already: let in, roles as they were (a provider that fails to send the claim takes nobody's projects).
    expect((await evilWith(claimsOf("gs", "gs@evil.test", { groups: undefined }))).res.status).toBe(302);
    expect(await roleIn(gs.id, research.id)).toBe("editor");
  });

  it("applies a change of the group table at once, by each person's groups at their last sign-in", async () => {
    expect((await evilWith(claimsOf("gt", "gt@evil.test", { groups: ["evil-editors"] }))).res.status).toBe(302);
    const gt = (await findUserByEmail("gt@evil.test"))!;
    expect(await roleIn(gt.id, packaging.id)).toBeNull();
    await addGroupRole(SYSTEM, { provider: "evil", group: "evil-editors", projectId: packaging.id, role: "viewer" });
    expect(await roleIn(gt.id, packaging.id)).toBe("viewer");
    const row = await db()
      .selectFrom("sso_group_roles")
      .select("id")
      .where("provider", "=", "evil")
      .where("project_id", "=", packaging.id)
      .executeTakeFirstOrThrow();
    await removeGroupRole(SYSTEM, row.id);
    expect(await roleIn(gt.id, packaging.id)).toBeNull();
    expect(await roleIn(gt.id, research.id)).toBe("editor");
  });

  it("never changes a membership an admin gave by hand, in a project the groups govern", async () => {
    const hank = await makeUser("user", { email: "hank@evil.test" });
    await db()
      .insertInto("project_members")
      .values({ project_id: research.id, user_id: hank.user.id, role: "manager", created_at: Date.now() })
      .execute();
    expect((await evilWith(claimsOf("hank", "hank@evil.test", { groups: ["evil-editors"] }))).res.status).toBe(302);
    expect(await roleIn(hank.user.id, research.id)).toBe("manager");
    expect((await evilWith(claimsOf("hank", "hank@evil.test", { groups: [] }))).res.status).toBe(302);
    expect(await roleIn(hank.user.id, research.id)).toBe("manager");
  });

  it("refuses an address linked to another subject, a pending account, and claims Koala cannot keep", async () => {
    expect((await evilWith(claimsOf("oscar-1", "oscar@evil.test", { groups: ["evil-editors"] }))).res.status).toBe(302);
    await expectRefused(
      async () => (await evilWith(claimsOf("oscar-2", "oscar@evil.test", { groups: ["evil-editors"] }))).res,
      403,
      /already belongs to another Evil account/,
      "other_subject",
    );
    await makeUser("user", { email: "pat@evil.test", status: "pending" });
    await expectRefused(async () => (await evilWith(claimsOf("pat", "pat@evil.test"))).res, 403, /still waiting for approval/, "pending");
    for (const claims of [
      claimsOf("nul\u0000sub", "nul@evil.test"),
      claimsOf("x".repeat(256), "long@evil.test"),
      claimsOf("two", "a@b@evil.test"),
      claimsOf("list", "x@evil.example, y@evil.test"),
      claimsOf("sid", "sid@evil.test", { sid: "bad\u0007sid" }),
    ])
      await expectRefused(async () => (await evilWith(claims)).res, 400, /sent details Koala cannot use/, "claims_invalid");
  });

  it("asks an account with Koala's TOTP for its code after the provider, and the session then carries the provider's", async () => {
    const secret = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP";
    const tina = await makeUser("user", { email: "tina@evil.test", totp_secret: secret });
    await db()
      .insertInto("project_members")
      .values({ project_id: research.id, user_id: tina.user.id, role: "viewer", created_at: Date.now() })
      .execute();
    const jar = new CookieJar();
    const { res } = await evilWith(claimsOf("tina", "tina@evil.test", { sid: "tina-sid", groups: [] }), jar);
    expect(res.status).toBe(302);
    expect(res.headers.get("Location")).toBe("/auth/verify");
    expect(await db().selectFrom("sessions").select("id_hash").where("user_id", "=", tina.user.id).execute()).toEqual([]);
    const wrong = await jar.fetch(`${base}/auth/verify`, { form: { code: "000000" } });
    expect(wrong.status).toBe(400);
    const ok = await jar.fetch(`${base}/auth/verify`, { form: { code: totpCode(secret, Date.now()) } });
    expect(ok.status).toBe(302);
    const session = await db().selectFrom("sessions").selectAll().where("user_id", "=", tina.user.id).executeTakeFirstOrThrow();
    expect(session).toMatchObject({ sso_provider: "evil", sso_subject: "tina", sso_sid: "tina-sid" });
    const method = await db()
      .selectFrom("audit_log")
      .select("detail")
      .where("action", "=", "sign_in.success")
      .where("actor_user_id", "=", tina.user.id)
      .executeTakeFirstOrThrow();
    expect(JSON.parse(method.detail)).toEqual({ method: "oidc:evil+totp" });
  });

  it("ends only the session a logout token names by its sid", async () => {
    const claims = (sid: string) => claimsOf("sidney", "sidney@evil.test", { sid, groups: ["evil-editors"] });
    expect((await evilWith(claims("sid-one"))).res.status).toBe(302);
    expect((await evilWith(claims("sid-two"))).res.status).toBe(302);
    const sidney = (await findUserByEmail("sidney@evil.test"))!;
    const live = async () =>
      (await db().selectFrom("sessions").select("sso_sid").where("user_id", "=", sidney.id).where("revoked_at", "is", null).execute()).map(
        (r) => r.sso_sid,
      );
    expect((await live()).sort()).toEqual(["sid-one", "sid-two"]);
    const res = await fetch(`${base}/auth/sso/evil/backchannel-logout`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ logout_token: await evil.logoutToken({ sid: "sid-one" }) }),
    });
    expect(res.status).toBe(200);
    expect(await live()).toEqual(["sid-two"]);
  });

  it("sends a new person of a registering provider to the application form, prefilled; once approved, their sign-in links the account", async () => {
    const jar = new CookieJar();
    const claims = claimsOf("quinn", "quinn@queue.test", { given_name: "Quinn", family_name: "Quill", groups: [] });
    Object.assign(evil.state, { sign: "good", claims });
    let page = "";
    try {
      page = await expectRefused(
        async () => (await evilSignIn(jar, "queue")).res,
        403,
        /Apply for one: an administrator reviews it/,
        "apply",
      );
    } finally {
      evil.state.claims = {};
    }
    // The page's text, its entities read (pageText): the link as the browser follows it.
    const apply = "/pending?email=quinn%40queue.test&name=Quinn&surname=Quill";
    expect(page).toContain(`href="${apply}"`);
    const form = await (await fetch(`${base}${apply}`)).text();
    for (const value of ['value="quinn@queue.test"', 'value="Quinn"', 'value="Quill"']) expect(form).toContain(value);

    const tz = await db().selectFrom("timezones").select("id").where("name", "=", "Africa/Johannesburg").executeTakeFirstOrThrow();
    const applied = await fetch(`${base}/pending`, {
      method: "POST",
      redirect: "manual",
      headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: base },
      body: new URLSearchParams({
        intent: "confirm",
        name: "Quinn",
        surname: "Quill",
        email: "quinn@queue.test",
        country_code: "ZA",
        mobile: "82 123 4567",
        country: "ZA",
        timezone: String(tz.id),
        org_unit: "Research",
        language: "en",
        client: "Acme",
        sim_use: "Shelf photos",
      }),
    });
    expect(applied.status).toBe(302);
    const reg = await db().selectFrom("registrations").select("id").where("email", "=", "quinn@queue.test").executeTakeFirstOrThrow();
    const approved = await fetch(`${base}/admin/registrations/${reg.id}`, {
      method: "POST",
      redirect: "manual",
      headers: { Cookie: await sessionCookie(admin.user.id), "Content-Type": "application/x-www-form-urlencoded", Origin: base },
      body: new URLSearchParams({ intent: "approve", [`role-${research.id}`]: "viewer" }),
    });
    expect(approved.status).toBe(302);
    // The approval's mail says where to sign in: an e-mailed link would be refused to an SSO-only address.
    const mails = (await db().selectFrom("jobs").select("payload").where("type", "=", "mail.send").execute()).map(
      (j) => JSON.parse(j.payload) as { to: string; subject: string; text: string },
    );
    const mail = mails.find((m) => m.to === "quinn@queue.test" && m.subject === "Your Koala account is ready")!;
    expect(mail.text).toContain('with "Sign in with Queue SSO"');
    expect(mail.text).not.toMatch(/\/auth\/[\w-]{20,}/);

    Object.assign(evil.state, { claims });
    try {
      expect((await evilSignIn(new CookieJar(), "queue")).res.status).toBe(302);
    } finally {
      evil.state.claims = {};
    }
    const quinn = (await findUserByEmail("quinn@queue.test"))!;
    const link = await db().selectFrom("sso_identities").select(["provider", "user_id"]).where("subject", "=", "quinn").execute();
    expect(link).toEqual([{ provider: "queue", user_id: quinn.id }]);
  });

  it("says a provider that is down or does not answer is unreachable, within the time-out", async () => {
    await expectRefused(() => fetch(`${base}/auth/sso/down`, { redirect: "manual" }), 502, /Down did not answer/, "provider_unreachable");
    const started = Date.now();
    await expectRefused(() => fetch(`${base}/auth/sso/slow`, { redirect: "manual" }), 502, /Slow did not answer/, "provider_unreachable");
    // OIDC_TIMEOUT_SECONDS is 3 here: the page comes after it, not after the request's own 30 s limit.
    expect(Date.now() - started).toBeLessThan(15_000);
    // A token endpoint slower than the time-out, after a good start.
    evil.state.delayMs = 5_000;
    try {
      await expectRefused(async () => (await evilSignIn()).res, 502, /Evil did not answer/, "provider_unreachable");
    } finally {
      evil.state.delayMs = 0;
    }
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
  });

  it("sends an SSO-only address from the e-mail field to its provider, and refuses it a password or an e-mailed link", async () => {
    const link = await fetch(`${base}/login`, {
      method: "POST",
      redirect: "manual",
      headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: base },
      body: new URLSearchParams({ intent: "magic-link", email: "Alice@Acme.test", redirectTo: "/projects" }),
    });
    expect(link.status).toBe(302);
    expect(link.headers.get("Location")).toBe("/auth/sso/acme?login_hint=Alice%40Acme.test&redirectTo=%2Fprojects");
    const mailed = (await db().selectFrom("jobs").select("payload").where("type", "=", "mail.send").execute()).filter(
      (j) => (JSON.parse(j.payload) as { to: string }).to === "alice@acme.test",
    );
    expect(mailed).toHaveLength(0);

    const password = await fetch(`${base}/login`, {
      method: "POST",
      redirect: "manual",
      headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: base },
      body: new URLSearchParams({ intent: "mfa", email: "alice@acme.test", password: "whatever-it-is", code: "123456" }),
    });
    expect(password.status).toBe(403);
    expect(await pageText(password)).toContain('Your organisation signs in to Koala through Acme SSO. Please use "Sign in with Acme SSO".');

    const alice = (await findUserByEmail("alice@acme.test"))!;
    const token = await issueMagicLink(alice.id, null);
    const used = await fetch(`${base}/auth/${token}`, {
      method: "POST",
      redirect: "manual",
      headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: base },
      body: new URLSearchParams({ token }),
    });
    expect(used.status).toBe(403);
    expect(used.headers.getSetCookie().join()).not.toMatch(/koala_session=[^;]/);
  });

  it("sends a redirect target outside the app to the dashboard after sign-in", async () => {
    const { res } = await signInThroughProvider(
      new CookieJar(),
      base,
      "acme",
      "alice",
      "pw-alice",
      `?redirectTo=${encodeURIComponent("https://evil.example/x")}`,
    );
    expect(res.headers.get("Location")).toBe("/dashboard");
    const again = await signInThroughProvider(
      new CookieJar(),
      base,
      "acme",
      "alice",
      "pw-alice",
      `?redirectTo=${encodeURIComponent("//evil.example/x")}`,
    );
    expect(again.res.headers.get("Location")).toBe("/dashboard");
  });

  it("ends the sessions a real back-channel logout names, and no other", async () => {
    const a = new CookieJar();
    const b = new CookieJar();
    await signInThroughProvider(a, base, "acme", "alice", "pw-alice", "?redirectTo=/profile");
    await signInThroughProvider(b, base, "acme", "alice", "pw-alice", "?redirectTo=/profile");
    const alice = (await findUserByEmail("alice@acme.test"))!;
    await db().updateTable("users").set({ terms_acknowledged_at: Date.now() }).where("id", "=", alice.id).execute();
    expect((await a.fetch(`${base}/profile`)).status).toBe(200);
    expect((await b.fetch(`${base}/profile`)).status).toBe(200);
    const live = await db()
      .selectFrom("sessions")
      .select(["sso_sid"])
      .where("user_id", "=", alice.id)
      .where("revoked_at", "is", null)
      .orderBy("created_at", "desc")
      .execute();
    // Browser b's provider session is the newest; the provider ends it.
    await op.backchannelLogout(CLIENT_ID, "alice", live[0]!.sso_sid);
    const gone = await b.fetch(`${base}/profile`);
    expect(gone.status).toBe(302);
    expect(gone.headers.get("Location")).toMatch(/^\/login/);
    expect((await a.fetch(`${base}/profile`)).status).toBe(200);
  });

  it("refuses forged logout tokens with a 400 and ends nothing; a good one once", async () => {
    expect((await evilSignIn()).res.status).toBe(302);
    const mallory = (await findUserByEmail("mallory@evil.test"))!;
    expect(mallory).toBeTruthy();
    const post = (token: string) =>
      fetch(`${base}/auth/sso/evil/backchannel-logout`, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ logout_token: token }),
      });
    const liveSessions = async () =>
      (await db().selectFrom("sessions").select("id_hash").where("user_id", "=", mallory.id).where("revoked_at", "is", null).execute())
        .length;
    const live = await liveSessions();
    expect(live).toBeGreaterThan(0);
    const now = Math.floor(Date.now() / 1000);
    for (const [what, token] of [
      ["another key", await evil.logoutToken({ sub: "evil-subject" }, "otherKey")],
      ["alg none", await evil.logoutToken({ sub: "evil-subject" }, "none")],
      ["no event", await evil.logoutToken({ sub: "evil-subject", events: {} })],
      ["a nonce", await evil.logoutToken({ sub: "evil-subject", nonce: "n" })],
      ["neither sub nor sid", await evil.logoutToken({})],
      ["wrong audience", await evil.logoutToken({ sub: "evil-subject", aud: "other" })],
      ["old", await evil.logoutToken({ sub: "evil-subject", iat: now - 3600 })],
      ["issued in the future", await evil.logoutToken({ sub: "evil-subject", iat: now + 3600 })],
      ["wrong issuer", await evil.logoutToken({ sub: "evil-subject", iss: "http://127.0.0.1:1" })],
      ["an access token", await evil.logoutToken({ sub: "evil-subject" }, "good", "at+jwt")],
      [
        "an event that is not an object",
        await evil.logoutToken({ sub: "evil-subject", events: { "http://schemas.openid.net/event/backchannel-logout": true } }),
      ],
      ["garbage", "not.a.token"],
    ] as const) {
      const res = await post(token);
      expect(res.status, what).toBe(400);
      expect(res.headers.get("Cache-Control")).toBe("no-store");
    }
    expect(await liveSessions()).toBe(live);
    const good = await evil.logoutToken({ sub: "evil-subject" });
    const res = await post(good);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ended: live });
    expect(await liveSessions()).toBe(0);
    expect((await post(good)).status).toBe(400);
    expect((await fetch(`${base}/auth/sso/evil/backchannel-logout`)).status).toBe(405);
  });
});
