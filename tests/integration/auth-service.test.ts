import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashPassword } from "~/lib/crypto.server";
import { totpCode } from "~/lib/totp.server";
import { auditEntries } from "~/models/audit.server";
import { INVALID_CREDENTIALS, requestMagicLink, SignInError, verifyMagicLink, verifyPasswordTotp } from "~/services/auth.server";
import { listMailbox } from "~/services/mail.server";
import { jobRegistry } from "~/services/job-registry.server";
import { runOnce } from "~/services/jobs.server";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";
import { makeUser } from "../helpers/fixtures";

const SECRET = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP";

describe.each(dialects)("sign-in service (%s)", (dialect) => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await freshDatabase(dialect, { RATE_LIMIT_PER_ADDRESS: "3", RATE_LIMIT_PER_IP: "6" });
  });
  afterAll(() => t.drop());

  it("signs in with password and code, records it, and refuses every wrong combination alike", async () => {
    const { user } = await makeUser("user", { password_hash: await hashPassword("pw-1"), totp_secret: SECRET });
    const meta = { ip: "10.0.0.1", userAgent: null };
    // One code, used twice: computing it again could give the next step's code if the clock crossed a step.
    const code = totpCode(SECRET);
    const ok = await verifyPasswordTotp({ email: user.email, password: "pw-1", code }, meta);
    expect(ok).toMatchObject({ userId: user.id, totpRequired: false });
    const attempts = [
      { email: user.email, password: "pw-1", code }, // replayed
      { email: user.email, password: "pw-2", code: totpCode(SECRET, Date.now() + 30_000) },
    ];
    for (const a of attempts) {
      const err = await verifyPasswordTotp(a, meta).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SignInError);
      expect((err as SignInError).message).toBe(INVALID_CREDENTIALS);
    }
    const log = await auditEntries(10);
    const failures = log.filter((e) => e.action === "sign_in.failure" && e.actor_user_id === user.id);
    // Newest first: the wrong password, then the replay, refused for its code.
    expect(failures.map((e) => JSON.parse(String(e.detail)).reason)).toEqual(["bad_password_or_account", "bad_or_replayed_code"]);
    expect(JSON.stringify(log)).not.toContain("pw-1");
  });

  it("limits attempts per address and per client IP with 429", async () => {
    const { user } = await makeUser("user", { password_hash: await hashPassword("pw"), totp_secret: SECRET });
    const meta = { ip: "10.0.0.2", userAgent: null };
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const err = (await verifyPasswordTotp({ email: user.email, password: "nope", code: "000000" }, meta).catch(
        (e: unknown) => e,
      )) as SignInError;
      statuses.push(err.status);
    }
    expect(statuses).toEqual([400, 400, 400, 429]);
    // Other addresses from the same IP: the IP limit (6) is reached after two more.
    const other = (email: string) => verifyPasswordTotp({ email, password: "x", code: "000000" }, meta).catch((e: SignInError) => e.status);
    expect([await other("a@x.io"), await other("b@x.io"), await other("c@x.io")]).toEqual([400, 400, 429]);
    expect((await auditEntries(50)).some((e) => e.action === "sign_in.rate_limited")).toBe(true);
  });

  it("mails a link to an account and a registration pointer to an unknown address", async () => {
    const { user } = await makeUser();
    const meta = { ip: "10.0.0.3", userAgent: null };
    await requestMagicLink(user.email, "/client/1", meta);
    await requestMagicLink("stranger@example.com", null, meta);
    while (await runOnce(jobRegistry, "test"));
    const mails = await listMailbox();
    const toUser = mails.find((m) => m.to === user.email)!;
    const toStranger = mails.find((m) => m.to === "stranger@example.com")!;
    const link = /\/auth\/([A-Za-z0-9_-]{43})/.exec(toUser.text)![1]!;
    expect(toStranger.text).toContain("There is no Koala account for this address");
    expect(toStranger.text).not.toContain("/auth/");

    const signIn = (token: string) => verifyMagicLink(token, meta);
    expect(await signIn(link)).toEqual({ userId: user.id, redirectTo: "/client/1", totpRequired: false });
    await expect(signIn(link)).rejects.toBeInstanceOf(SignInError);
  });
});
