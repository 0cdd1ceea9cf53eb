import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "~/db/connection.server";
import { APPROVE_MESSAGES, PASSWORD_MESSAGES, REGISTRATION_MESSAGES } from "~/lib/account-schemas";
import { hashPassword, verifyPassword } from "~/lib/crypto.server";
import { PROJECT_MESSAGES } from "~/lib/schemas";
import type { Actor } from "~/models/actor";
import { auditPage, recordAudit } from "~/models/audit.server";
import { sendRegistrationDigest } from "~/services/accounts.server";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";
import { makeProject, makeUser } from "../helpers/fixtures";
import { pageText, sessionCookie, startAppServer, type AppServer } from "../helpers/server";

/**
 * Accounts over real HTTP against the built server, as forms post them without JavaScript: registration that never
 * tells who has an account, its messages and rate limit, the admin console's decisions and its 404 for everyone
 * else, the profile's fixed columns and password rules, disabling, the spec's JSON files and the audit filter.
 * Mail is read from the job queue (the server runs no job runner, so every message waits there as sent).
 */
const SESSION_SECRET = "accounts-http-secret-0123456789abcdef";
const read = pageText;

describe.each(dialects)("accounts over HTTP (%s)", (dialect) => {
  let t: TestDatabase;
  let server: AppServer;
  let admin: { user: { id: number; email: string }; actor: Actor };
  let member: { user: { id: number; email: string }; actor: Actor };
  let adminCookie: string;
  let memberCookie: string;
  let projectA: { id: number; name: string };
  let projectB: { id: number; name: string };
  let timezoneId: string;

  const request = (base: string, url: string, cookie: string, fields?: Record<string, string>) =>
    fetch(`${base}${url}`, {
      method: fields ? "POST" : "GET",
      redirect: "manual",
      headers: {
        ...(cookie ? { Cookie: cookie } : {}),
        ...(fields ? { "Content-Type": "application/x-www-form-urlencoded", Origin: base } : {}),
      },
      body: fields ? new URLSearchParams(fields) : undefined,
    });
  const post = (url: string, fields: Record<string, string>, cookie = "") => request(server.base, url, cookie, fields);
  const get = (url: string, cookie = "") => request(server.base, url, cookie);

  /** A complete, valid application (confirm step) for an address; `extra` overrides or adds fields. */
  const application = (email: string, extra: Record<string, string> = {}) => ({
    intent: "confirm",
    name: "Ana",
    surname: "Silva",
    email,
    country_code: "ZA",
    mobile: "82 123 4567",
    country: "ZA",
    timezone: timezoneId,
    org_unit: "Research",
    language: "en",
    client: "Acme",
    sim_use: "Shelf photos",
    ...extra,
  });
  const stored = async (email: string) =>
    db().selectFrom("registrations").selectAll().where("email", "=", email.toLowerCase()).orderBy("id").execute();
  /** Every e-mail the app sent so far (queued jobs of type mail.send), oldest first. */
  const mails = async () =>
    (await db().selectFrom("jobs").select("payload").where("type", "=", "mail.send").orderBy("id").execute()).map(
      (j) => JSON.parse(j.payload) as { to: string; subject: string; text: string },
    );
  const mailsTo = async (email: string) => (await mails()).filter((m) => m.to === email.toLowerCase());
  const userRow = (id: number) => db().selectFrom("users").selectAll().where("id", "=", id).executeTakeFirstOrThrow();

  beforeAll(async () => {
    t = await freshDatabase(dialect, { SESSION_SECRET });
    admin = await makeUser("admin");
    member = await makeUser();
    projectA = await makeProject([{ actor: member.actor, role: "viewer" }]);
    projectB = await makeProject([]);
    adminCookie = await sessionCookie(admin.user.id);
    memberCookie = await sessionCookie(member.user.id);
    const tz = await db().selectFrom("timezones").select("id").where("name", "=", "Africa/Johannesburg").executeTakeFirstOrThrow();
    timezoneId = String(tz.id);
    server = await startAppServer(t, { SESSION_SECRET, JOB_RUNNER: "off", REGISTRATIONS_PER_IP: "1000" });
  }, 90_000);
  afterAll(async () => {
    await server?.stop();
    await t.drop();
  });

  it("answers a new address, one with an account and a robot alike; stores only the new one and mails each its own message", async () => {
    const review = await post("/pending", application("fresh@example.com", { intent: "review" }));
    expect(review.status).toBe(200);
    expect(await read(review)).toContain("Confirm your application");
    expect(await stored("fresh@example.com")).toHaveLength(0);

    const fresh = await post("/pending", application("Fresh@Example.com"));
    const known = await post("/pending", application(member.user.email.toUpperCase()));
    const robot = await post("/pending", application("robot@example.com", { website: "https://spam.example/" }));
    for (const res of [fresh, known, robot]) {
      expect(res.status).toBe(302);
      expect(res.headers.get("Location")).toBe("/pending/submitted");
    }
    // Byte for byte the same answer, headers and all (but the date, the request's own id and the page's random CSP nonce).
    const headers = (r: Response) =>
      [...r.headers].filter(([k]) => k !== "date" && k !== "x-request-id").map(([k, v]) => `${k}: ${v.replace(/nonce-[^']+/g, "")}`);
    expect(headers(known)).toEqual(headers(fresh));
    expect(await read(known)).toBe(await read(fresh));

    const row = (await stored("fresh@example.com"))[0]!;
    expect(row).toMatchObject({ status: "submitted", name: "Ana", country_code: "+27", mobile: "821234567", org_unit: "Research" });
    expect(await stored(member.user.email)).toHaveLength(0);
    expect(await stored("robot@example.com")).toHaveLength(0);

    expect((await mailsTo("fresh@example.com")).map((m) => m.subject)).toEqual(["Your Koala application was received"]);
    const toKnown = await mailsTo(member.user.email);
    expect(toKnown.map((m) => m.subject)).toEqual(["Your Koala application"]);
    expect(toKnown[0]!.text).toContain("already has one");
    expect(await mailsTo("robot@example.com")).toEqual([]);

    // A second application while the first waits: the same answer, nothing new stored, told it still waits.
    const again = await post("/pending", application("fresh@example.com", { name: "Other" }));
    expect([again.status, again.headers.get("Location")]).toEqual([302, "/pending/submitted"]);
    expect((await stored("fresh@example.com")).map((r) => r.id)).toEqual([row.id]);
    expect((await mailsTo("fresh@example.com"))[1]!.text).toContain("still waiting");
  });

  it("refuses an empty field, a bad e-mail, a bad mobile, a choice off the lists and a too long name, storing nothing", async () => {
    const cases: [Record<string, string>, string][] = [
      [{ surname: "" }, REGISTRATION_MESSAGES.empty],
      [{ email: "not-an-address" }, REGISTRATION_MESSAGES.email],
      [{ mobile: "12 345" }, REGISTRATION_MESSAGES.mobile],
      [{ mobile: "82 123 456a" }, REGISTRATION_MESSAGES.mobile],
      [{ language: "de" }, "Please choose from the lists."],
      [{ timezone: "987654" }, "Please choose from the lists."],
      [{ org_unit: "Nowhere" }, "Please choose from the lists."],
      [{ name: "a".repeat(51) }, "Name cannot be longer than 50 characters"],
    ];
    for (const [extra, message] of cases) {
      const res = await post("/pending", application("refused@example.com", extra));
      expect(res.status, JSON.stringify(extra)).toBe(400);
      expect(await read(res), JSON.stringify(extra)).toContain(message);
    }
    expect(
      await db().selectFrom("registrations").select("id").where("email", "in", ["refused@example.com", "not-an-address"]).execute(),
    ).toEqual([]);
    expect(await mailsTo("refused@example.com")).toEqual([]);
  });

  it("answers the third application from one address with 429 when REGISTRATIONS_PER_IP=2, storing nothing and keeping what was typed", async () => {
    await db().deleteFrom("rate_limits").execute();
    const limited = await startAppServer(t, { SESSION_SECRET, JOB_RUNNER: "off", REGISTRATIONS_PER_IP: "2" });
    try {
      const send = (email: string) => request(limited.base, "/pending", "", application(email));
      expect((await send("rate1@example.com")).status).toBe(302);
      expect((await send("rate2@example.com")).status).toBe(302);
      const third = await send("rate3@example.com");
      expect(third.status).toBe(429);
      const page = await read(third);
      expect(page).toContain("Too many applications from this address");
      // The form comes back as it was typed, so nothing is lost while the person waits.
      expect(page).toMatch(/<form[^>]*action="\/pending"/);
      expect(page).toMatch(/<input[^>]*name="email"[^>]*value="rate3@example.com"/);
      expect(page).toMatch(/<input[^>]*name="name"[^>]*value="Ana"/);
      expect(page).toMatch(/<textarea[^>]*name="sim_use"[^>]*>Shelf photos<\/textarea>/);
      expect(await stored("rate3@example.com")).toHaveLength(0);
      expect(await mailsTo("rate3@example.com")).toEqual([]);
    } finally {
      await limited.stop();
      await db().deleteFrom("rate_limits").execute();
    }
  });

  it("approves an application into an active user with the posted roles, audited and mailed a sign-in link, once only", async () => {
    await post("/pending", application("approve@example.com", { name: "Bea" }));
    const reg = (await stored("approve@example.com"))[0]!;
    const url = `/admin/registrations/${reg.id}`;
    expect(await read(await get(url, adminCookie))).toContain("approve@example.com");

    const none = await post(url, { intent: "approve", [`role-${projectA.id}`]: "" }, adminCookie);
    expect(none.status).toBe(400);
    expect(await read(none)).toContain(APPROVE_MESSAGES.none);
    expect(await db().selectFrom("users").select("id").where("email", "=", "approve@example.com").execute()).toEqual([]);
    expect((await stored("approve@example.com"))[0]!.status).toBe("submitted");

    const ok = await post(url, { intent: "approve", [`role-${projectA.id}`]: "manager", [`role-${projectB.id}`]: "viewer" }, adminCookie);
    expect(ok.status).toBe(302);
    const user = await db().selectFrom("users").selectAll().where("email", "=", "approve@example.com").executeTakeFirstOrThrow();
    expect(user).toMatchObject({ name: "Bea", role: "user", status: "active", mobile: "821234567", language_code: "en" });
    const roles = await db()
      .selectFrom("project_members")
      .select(["project_id", "role"])
      .where("user_id", "=", user.id)
      .orderBy("project_id")
      .execute();
    expect(roles).toEqual([
      { project_id: projectA.id, role: "manager" },
      { project_id: projectB.id, role: "viewer" },
    ]);
    expect((await stored("approve@example.com"))[0]).toMatchObject({ status: "approved", user_id: user.id, decided_by: admin.user.id });
    const audit = await db().selectFrom("audit_log").selectAll().where("action", "=", "registration.approved").execute();
    // The admin's address comes with their actor (the load context's), not as a separate argument a route could forget.
    expect(audit).toEqual([
      expect.objectContaining({ actor_user_id: admin.user.id, subject: `user:${user.id}`, ip: expect.stringMatching(/127\.0\.0\.1$/) }),
    ]);
    const welcome = (await mailsTo("approve@example.com")).find((m) => m.subject === "Your Koala account is ready");
    const link = /\/auth\/[\w-]{20,}/.exec(welcome?.text ?? "")?.[0];
    expect(link).toBeTruthy();
    // The link signs the new user in (its page posts the token back as a field).
    const usedLink = await post(link!, { token: link!.slice("/auth/".length) });
    expect(usedLink.status).toBe(302);
    expect(usedLink.headers.getSetCookie().some((c) => c.startsWith("koala_session=") && !c.startsWith("koala_session=;"))).toBe(true);

    const twice = await post(url, { intent: "approve", [`role-${projectA.id}`]: "editor" }, adminCookie);
    expect(twice.status).toBe(404);
    expect(await db().selectFrom("users").select("id").where("email", "=", "approve@example.com").execute()).toHaveLength(1);
    expect(await db().selectFrom("project_members").select("role").where("user_id", "=", user.id).execute()).toHaveLength(2);
  });

  it("rejects an application with a reason: marked rejected and the reason mailed to the applicant", async () => {
    await post("/pending", application("reject@example.com"));
    const reg = (await stored("reject@example.com"))[0]!;
    const res = await post(`/admin/registrations/${reg.id}`, { intent: "reject", reason: "No project code was given" }, adminCookie);
    expect(res.status).toBe(302);
    expect((await stored("reject@example.com"))[0]).toMatchObject({ status: "rejected", reason: "No project code was given" });
    const mail = (await mailsTo("reject@example.com")).at(-1)!;
    expect(mail.text).toContain("not approved");
    expect(mail.text).toContain("Reason: No project code was given");
    expect(await db().selectFrom("users").select("id").where("email", "=", "reject@example.com").execute()).toEqual([]);
  });

  it("shows an admin form's refusal under that form only, without JavaScript", async () => {
    /** The text of each form's error line (FormError's `<div id=…>`), by id. */
    const errors = (page: string, ...ids: string[]) =>
      Object.fromEntries(ids.map((id) => [id, new RegExp(`<div id="${id}"[^>]*>([^<]*)</div>`).exec(page)?.[1]]));
    await post("/pending", application("refused@example.com"));
    const reg = (await stored("refused@example.com"))[0]!;
    const url = `/admin/registrations/${reg.id}`;
    const long = await post(url, { intent: "reject", reason: "x".repeat(1001) }, adminCookie);
    expect(long.status).toBe(400);
    expect(errors(await read(long), "approve-error", "reject-error")).toEqual({
      "approve-error": "",
      "reject-error": "The reason cannot be longer than 1000 characters",
    });
    const none = await post(url, { intent: "approve" }, adminCookie);
    expect(errors(await read(none), "approve-error", "reject-error")).toEqual({
      "approve-error": APPROVE_MESSAGES.none,
      "reject-error": "",
    });
    expect((await stored("refused@example.com"))[0]!.status).toBe("submitted");

    const project = `/admin/projects/${projectB.id}`;
    const stranger = await post(project, { intent: "member-add", email: "nobody@example.com", role: "viewer" }, adminCookie);
    expect(stranger.status).toBe(400);
    expect(errors(await read(stranger), "logo-error", "member-error")).toEqual({
      "logo-error": "",
      "member-error": "There is no user with this e-mail address.",
    });
    const noFile = new FormData();
    noFile.append("intent", "logo");
    const logo = await fetch(`${server.base}${project}`, {
      method: "POST",
      redirect: "manual",
      headers: { Cookie: adminCookie, Origin: server.base },
      body: noFile,
    });
    expect(logo.status).toBe(400);
    expect(errors(await read(logo), "logo-error", "member-error")).toEqual({
      "logo-error": "Please choose an image file.",
      "member-error": "",
    });
    const unnamed = await post(project, { name: "" }, adminCookie);
    expect(unnamed.status).toBe(400);
    const unnamedPage = await read(unnamed);
    expect(unnamedPage).toContain(PROJECT_MESSAGES.empty);
    expect(errors(unnamedPage, "logo-error", "member-error")).toEqual({ "logo-error": "", "member-error": "" });
    expect(await db().selectFrom("projects").select("name").where("id", "=", projectB.id).executeTakeFirstOrThrow()).toEqual({
      name: projectB.name,
    });
  });

  it("answers every admin page and every admin post with 404 to a signed-in non-admin, and changes nothing", async () => {
    await post("/pending", application("waiting@example.com"));
    const reg = (await stored("waiting@example.com"))[0]!;
    const victim = await makeUser();
    const snapshot = async () => ({
      users: await db().selectFrom("users").select(["id", "email", "role", "status", "totp_secret"]).orderBy("id").execute(),
      members: await db()
        .selectFrom("project_members")
        .select(["project_id", "user_id", "role"])
        .orderBy("project_id")
        .orderBy("user_id")
        .execute(),
      projects: await db().selectFrom("projects").select(["id", "name", "wsc", "wsc_source", "logo_key"]).orderBy("id").execute(),
      registrations: await db().selectFrom("registrations").select(["id", "status"]).orderBy("id").execute(),
      mails: (await mails()).length,
      admin: (await db().selectFrom("audit_log").select("id").where("action", "<>", "sign_in.success").execute()).length,
    });
    const before = await snapshot();
    const gets = [
      "/admin",
      `/admin/registrations/${reg.id}`,
      "/admin/users",
      `/admin/users?q=${encodeURIComponent(victim.user.email)}`,
      `/admin/users/${victim.user.id}`,
      "/admin/projects",
      `/admin/projects/${projectA.id}`,
      "/admin/audit?action=user.disabled",
    ];
    for (const url of gets) expect((await get(url, memberCookie)).status, url).toBe(404);
    const me = String(member.user.id);
    const posts: [string, Record<string, string>][] = [
      [`/admin/registrations/${reg.id}`, { intent: "approve", [`role-${projectA.id}`]: "manager" }],
      [`/admin/registrations/${reg.id}`, { intent: "reject", reason: "x" }],
      [`/admin/users/${me}`, { intent: "role", role: "admin" }],
      [`/admin/users/${me}`, { intent: "membership", project: String(projectB.id), role: "manager" }],
      [`/admin/users/${me}`, { intent: "membership", project: String(projectA.id), remove: "yes" }],
      [`/admin/users/${victim.user.id}`, { intent: "disable" }],
      [`/admin/users/${victim.user.id}`, { intent: "enable" }],
      [`/admin/users/${victim.user.id}`, { intent: "reset-totp" }],
      [`/admin/users/${victim.user.id}`, { intent: "send-link" }],
      ["/admin/projects", { name: "Hijacked" }],
      [`/admin/projects/${projectA.id}`, { name: "Renamed", wsc: "yes", source: "https://evil.example/" }],
      [`/admin/projects/${projectA.id}`, { intent: "logo-remove" }],
      [`/admin/projects/${projectA.id}`, { intent: "member-add", email: member.user.email, role: "manager" }],
      [`/admin/projects/${projectA.id}`, { intent: "member", user: me, role: "manager" }],
      [`/admin/projects/${projectA.id}`, { intent: "member", user: me, remove: "yes" }],
      // Pages that take no posts answer a non-admin's post like their GET: 404, not 405.
      ["/admin", { intent: "approve" }],
      ["/admin?index", { intent: "approve" }],
      ["/admin/users", { q: "x" }],
      ["/admin/audit", { action: "x" }],
    ];
    for (const [url, fields] of posts) expect((await post(url, fields, memberCookie)).status, `${url} ${fields.intent}`).toBe(404);
    const logo = new FormData();
    logo.append("intent", "logo");
    logo.append("logo", new Blob([Buffer.from("not really a png")], { type: "image/png" }), "logo.png");
    const upload = await fetch(`${server.base}/admin/projects/${projectA.id}`, {
      method: "POST",
      redirect: "manual",
      headers: { Cookie: memberCookie, Origin: server.base },
      body: logo,
    });
    expect(upload.status).toBe(404);
    expect(await snapshot()).toEqual(before);
    expect((await userRow(member.user.id)).role).toBe("user");
    expect((await stored("waiting@example.com"))[0]!.status).toBe("submitted");
  });

  it("saves the profile's own fields only: a posted role, status and e-mail are ignored", async () => {
    const { user } = await makeUser();
    const res = await post(
      "/profile",
      {
        intent: "profile",
        name: "Renamed",
        surname: "Person",
        mobile: "82 765 4321",
        country: "ZA",
        timezone: timezoneId,
        language: "en",
        org_unit: "Design",
        role: "admin",
        role_id: "admin",
        status: "disabled",
        email: "other@example.com",
      },
      await sessionCookie(user.id),
    );
    expect(res.status).toBe(302);
    expect(await userRow(user.id)).toMatchObject({
      name: "Renamed",
      mobile: "827654321",
      role: "user",
      status: "active",
      email: user.email,
    });
    const audit = await db()
      .selectFrom("audit_log")
      .select(["subject", "ip"])
      .where("action", "=", "profile.updated")
      .where("actor_user_id", "=", user.id)
      .execute();
    expect(audit).toEqual([{ subject: `user:${user.id}`, ip: expect.stringMatching(/127\.0\.0\.1$/) }]);
  });

  it("ends a disabled user's sessions at once; enabling lets a new session in, never the old one", async () => {
    const { user } = await makeUser();
    const old = await sessionCookie(user.id);
    expect((await get("/dashboard", old)).status).toBe(200);
    expect((await post(`/admin/users/${user.id}`, { intent: "disable" }, adminCookie)).status).toBe(302);
    expect((await userRow(user.id)).status).toBe("disabled");
    const after = await get("/dashboard", old);
    expect([after.status, after.headers.get("Location")]).toEqual([302, "/login"]);
    // Nor does a session made while the account is disabled (as a sign-in link would make one).
    expect((await get("/dashboard", await sessionCookie(user.id))).status).toBe(302);
    expect((await post(`/admin/users/${user.id}`, { intent: "enable" }, adminCookie)).status).toBe(302);
    expect((await get("/dashboard", await sessionCookie(user.id))).status).toBe(200);
    expect((await get("/dashboard", old)).status).toBe(302);
  });

  it("refuses a short, common or mismatched password and a wrong current one; a good one revokes the other sessions only", async () => {
    const { user } = await makeUser();
    const current = "correct horse battery staple";
    await db()
      .updateTable("users")
      .set({ password_hash: await hashPassword(current) })
      .where("id", "=", user.id)
      .execute();
    const hash = (await userRow(user.id)).password_hash;
    const mine = await sessionCookie(user.id);
    const other = await sessionCookie(user.id);
    const change = (fields: Record<string, string>) =>
      post("/profile", { intent: "password", hasPassword: "yes", current, ...fields }, mine);
    const cases: [Record<string, string>, string][] = [
      [{ password: "short1!", confirm: "short1!" }, PASSWORD_MESSAGES.short],
      [{ password: "password1234", confirm: "password1234" }, PASSWORD_MESSAGES.common],
      [{ password: "a fine long passphrase", confirm: "a fine long passphrasE" }, PASSWORD_MESSAGES.mismatch],
      [
        { current: "not the password at all", password: "a fine long passphrase", confirm: "a fine long passphrase" },
        PASSWORD_MESSAGES.wrongCurrent,
      ],
      // Claiming to have no password yet does not skip the current one.
      [
        { hasPassword: "no", current: "", password: "a fine long passphrase", confirm: "a fine long passphrase" },
        PASSWORD_MESSAGES.wrongCurrent,
      ],
    ];
    for (const [fields, message] of cases) {
      const res = await change(fields);
      expect(res.status, message).toBe(400);
      expect(await read(res), message).toContain(message);
      expect((await userRow(user.id)).password_hash, message).toBe(hash);
    }
    const ok = await change({ password: "a fine long passphrase", confirm: "a fine long passphrase" });
    expect(ok.status).toBe(302);
    const changed = (await userRow(user.id)).password_hash;
    expect(changed).not.toBe(hash);
    expect(await verifyPassword("a fine long passphrase", changed)).toBe(true);
    expect((await get("/dashboard", mine)).status).toBe(200);
    const out = await get("/dashboard", other);
    expect([out.status, out.headers.get("Location")]).toEqual([302, "/login"]);
  });

  it("serves the spec's JSON files with their exact fields, the user's own projects and no secret, to the signed-in only", async () => {
    const secret = "JBSWY3DPEHPK3PXPJBSWY3DP";
    await db()
      .updateTable("users")
      .set({ totp_secret: secret, password_hash: await hashPassword("a member's long password") })
      .where("id", "=", member.user.id)
      .execute();
    const json = async (file: string) => {
      const res = await get(`/assets/data/${file}`, memberCookie);
      expect(res.status, file).toBe(200);
      const text = await res.text();
      return { text, body: JSON.parse(text) as Record<string, unknown>[] & Record<string, unknown> };
    };
    const keys = (o: object) => Object.keys(o).sort();

    const user = await json("user.json");
    expect(keys(user.body)).toEqual(
      ["client_id", "country_id", "email", "language_id", "mobile", "name", "org_unit_id", "role_id", "sur_name", "timezone_id"].sort(),
    );
    expect(user.body).toMatchObject({ email: member.user.email, name: "Test", role_id: "user", client_id: [projectA.id] });
    const row = await userRow(member.user.id);
    for (const hidden of [secret, row.password_hash!, "password", "totp"]) expect(user.text).not.toContain(hidden);

    const countries = (await json("countries.json")).body;
    expect(keys(countries[0]!)).toEqual(["_id", "code", "country_code", "name"]);
    expect(countries.find((c) => c.code === "ZA")).toMatchObject({ _id: "ZA", country_code: "+27" });
    const languages = (await json("languages.json")).body;
    expect(keys(languages[0]!)).toEqual(["_id", "_status", "created_at", "iso_code", "name", "updated_at"]);
    expect(languages.find((l) => l.iso_code === "de")).toMatchObject({ _status: "inactive" });
    const timezones = (await json("timezones.json")).body;
    expect(keys(timezones[0]!)).toEqual(["id", "name", "offset"]);
    expect(timezones.find((z) => String(z.id) === timezoneId)).toMatchObject({ name: "Africa/Johannesburg", offset: 2 });
    const units = (await json("org_units.json")).body;
    expect(keys(units[0]!)).toEqual(["id", "name"]);
    expect(units.map((u) => u.name)).toContain("Research");
    const clients = (await json("clients.json")).body;
    expect(clients.map(keys)).toEqual([["client_id", "logo", "name", "wsc"]]);
    expect(clients[0]).toMatchObject({ client_id: projectA.id, name: projectA.name, logo: null, wsc: false });

    expect((await get("/assets/data/secrets.json", memberCookie)).status).toBe(404);
    for (const file of ["user.json", "countries.json", "clients.json"]) {
      const res = await get(`/assets/data/${file}`);
      expect(res.status, file).toBe(401);
      expect(await res.text()).not.toContain(member.user.email);
    }
  });

  it("filters the audit log by action and by user, in the model and on the page", async () => {
    const other = await makeUser("admin");
    await recordAudit({ action: "user.role_changed", actorUserId: other.user.id, subject: `user:${member.user.id}` });
    await recordAudit({ action: "user.role_changed", actorUserId: admin.user.id, subject: `user:${member.user.id}` });
    await recordAudit({ action: "project.created", actorUserId: other.user.id, subject: "project:1" });

    const byAction = await auditPage(admin.actor, { action: "user.role_changed" });
    expect(byAction.rows.map((r) => r.email).sort()).toEqual([admin.user.email, other.user.email].sort());
    const byUser = await auditPage(admin.actor, { user: other.user.email.toUpperCase() });
    expect(byUser.rows.map((r) => r.action).sort()).toEqual(["project.created", "user.role_changed"]);
    const both = await auditPage(admin.actor, { user: other.user.email, action: "project.created" });
    expect(both.rows.map((r) => [r.action, r.email])).toEqual([["project.created", other.user.email]]);
    await expect(auditPage(member.actor, {})).rejects.toThrow();

    const page = await read(await get(`/admin/audit?action=project.created&user=${encodeURIComponent(other.user.email)}`, adminCookie));
    expect(page.match(/<td>project\.created<\/td>/g)).toHaveLength(1);
    expect(page).not.toContain("<td>user.role_changed</td>");
    expect(page).not.toContain(`<td>${admin.user.email}</td>`);
  });

  it("mails every active admin a digest while applications wait, and nothing when none do", async () => {
    await db().updateTable("registrations").set({ status: "rejected" }).where("status", "=", "submitted").execute();
    const before = (await mails()).length;
    expect(await sendRegistrationDigest()).toBe(0);
    expect((await mails()).length).toBe(before);

    expect((await post("/pending", application("digest-case@example.com"))).status).toBe(302);
    const admins = await db().selectFrom("users").select("email").where("role", "=", "admin").where("status", "=", "active").execute();
    expect(await sendRegistrationDigest()).toBe(admins.length);
    for (const { email } of admins) {
      const digest = (await mailsTo(email)).find((m) => m.subject.includes("waiting for approval"));
      expect(digest?.subject, email).toBe("Koala: 1 application waiting for approval");
      expect(digest?.text).toContain("/admin");
    }
    expect(await mailsTo(member.user.email)).not.toContainEqual(expect.objectContaining({ subject: expect.stringContaining("waiting") }));
  });

  it("closes what a hostile review found: the honeypot at the review step, mail floods, guessing from a session, huge ids", async () => {
    // A robot that fills the honeypot and only ever presses Submit is sent to the success view; nothing stored.
    const bot = await post("/pending", application("bot@example.com", { intent: "review", website: "http://spam.example" }));
    expect(bot.headers.get("Location")).toBe("/pending/submitted");
    expect(await stored("bot@example.com")).toEqual([]);

    // One address gets at most RATE_LIMIT_PER_ADDRESS (5) mails per window, however often it is posted; the answer never changes.
    for (let i = 0; i < 7; i++)
      expect((await post("/pending", application("flooded@example.com"))).headers.get("Location")).toBe("/pending/submitted");
    expect(await mailsTo("flooded@example.com")).toHaveLength(5);
    expect((await mailsTo("flooded@example.com")).every((m) => !m.text.includes("Ana"))).toBe(true);

    // Wrong current passwords from a session are throttled like sign-ins: the sixth guess is refused unchecked.
    const guesser = await makeUser();
    await db()
      .updateTable("users")
      .set({ password_hash: await hashPassword("the real password 123") })
      .where("id", "=", guesser.user.id)
      .execute();
    const cookie = await sessionCookie(guesser.user.id);
    const guess = (current: string) =>
      post(
        "/profile",
        { intent: "password", hasPassword: "yes", current, password: "a brand new secret 456", confirm: "a brand new secret 456" },
        cookie,
      );
    for (let i = 0; i < 5; i++) expect((await guess(`wrong guess ${i}`)).status).toBe(400);
    const refused = await guess("the real password 123");
    expect(refused.status).toBe(429);
    expect(await verifyPassword("the real password 123", (await userRow(guesser.user.id)).password_hash)).toBe(true);

    // An admin's project edit is in the audit log, with what changed.
    expect(
      (
        await post(
          `/admin/projects/${projectB.id}`,
          { name: `${projectB.name} renamed`, wsc: "yes", source: "https://wsc.example/m.json" },
          adminCookie,
        )
      ).status,
    ).toBe(302);
    const edited = await auditPage(admin.actor, { action: "project.edited" });
    expect(edited.rows[0]).toMatchObject({
      subject: `project:${projectB.id}`,
      email: admin.user.email,
      ip: expect.stringMatching(/127\.0\.0\.1$/),
    });
    expect(JSON.parse(edited.rows[0]!.detail)).toMatchObject({ wsc: true, source: "https://wsc.example/m.json" });

    // Ids past the 32-bit columns are no id at all: 404 on both dialects, never a database error.
    for (const url of ["/client/3000000000", "/client/3000000000/logo", "/admin/projects/3000000000", "/admin/users/99999999999"])
      expect((await get(url, adminCookie)).status, url).toBe(404);
  });
});
