import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig, setConfig } from "~/config.server";
import { db } from "~/db/connection.server";
import { backoffMs, getJob } from "~/models/jobs.server";
import { jobRegistry } from "~/services/job-registry.server";
import { runOnce } from "~/services/jobs.server";
import { listMailbox, sendMail } from "~/services/mail.server";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";
import { startSmtp } from "../helpers/smtp";

/**
 * A real SMTP server on loopback that the test can take down and bring back on the same port (the app keeps
 * one mail transport per process, made from the first SMTP_URL it sees).
 */
const received: string[] = [];
let smtp: Awaited<ReturnType<typeof startSmtp>> | undefined;
let port = 0;
async function smtpUp() {
  smtp = await startSmtp(received, port);
  port = smtp.port;
}
async function smtpDown() {
  const server = smtp;
  smtp = undefined;
  await server?.close();
}
beforeAll(smtpUp);
afterAll(smtpDown);

describe.each(dialects)("mail (%s)", (dialect) => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await freshDatabase(dialect);
  });
  afterAll(() => t.drop());
  const withSmtp = () =>
    setConfig(loadConfig({ DATA_DIR: t.dataDir, KOALA_ENV: "development", SMTP_URL: `smtp://127.0.0.1:${port}`, LOG_LEVEL: "error" }));
  /** The queued mail job of a subject (a finished job's payload is cleared, so look it up while queued). */
  const jobOf = async (subject: string) => {
    const rows = await db().selectFrom("jobs").select(["id", "payload"]).where("type", "=", "mail.send").execute();
    return rows.find((r) => r.payload.includes(subject))!.id;
  };

  it("goes through the job queue into the local mailbox when SMTP_URL is not set", async () => {
    await sendMail({ to: "ana@example.com", subject: "Hello", text: "Body" });
    expect(await listMailbox()).toEqual([]);
    expect(await runOnce(jobRegistry, "test")).toBe(true);
    const mails = await listMailbox();
    expect(mails).toHaveLength(1);
    expect(mails[0]).toMatchObject({ to: "ana@example.com", subject: "Hello", text: "Body" });
  });

  it("goes through the job queue to a real SMTP server", async () => {
    withSmtp();
    const subject = `Over SMTP ${dialect}`;
    await sendMail({ to: "bo@example.com", subject, text: "Real wire" });
    const id = await jobOf(subject);
    expect(received.filter((m) => m.includes(subject))).toHaveLength(0);
    expect(await runOnce(jobRegistry, "test")).toBe(true);
    const mail = received.find((m) => m.includes(`Subject: ${subject}`));
    expect(mail).toContain("Real wire");
    expect(await getJob(id)).toMatchObject({ status: "done", payload: "null" });
  });

  it("is retried with backoff while the SMTP server is down, and delivered once it is back", async () => {
    withSmtp();
    await smtpDown();
    const subject = `Later ${dialect}`;
    await sendMail({ to: "cy@example.com", subject, text: "x" });
    const id = await jobOf(subject);
    // Down: the attempt fails and the job is put back for later, not lost.
    expect(await runOnce(jobRegistry, "test")).toBe(true);
    const failed = await getJob(id);
    expect(failed).toMatchObject({ status: "queued", attempts: 1 });
    expect(failed!.last_error).toBeTruthy();
    expect(failed!.run_at).toBeGreaterThan(Date.now() + backoffMs(1) - 2000);
    expect(await runOnce(jobRegistry, "test")).toBe(false); // not due again before the backoff
    // Back up, and the backoff over (time travel): the retry delivers it.
    await smtpUp();
    await db().updateTable("jobs").set({ run_at: Date.now() }).where("id", "=", id).execute();
    expect(await runOnce(jobRegistry, "test")).toBe(true);
    expect(await getJob(id)).toMatchObject({ status: "done", attempts: 2 });
    expect(received.filter((m) => m.includes(`Subject: ${subject}`))).toHaveLength(1);
  });
});
