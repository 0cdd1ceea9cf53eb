import { SMTPServer } from "smtp-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig, setConfig } from "~/config.server";
import { deliver, listMailbox, sendMail } from "~/services/mail.server";
import { runOnce } from "~/services/jobs.server";
import { getJob } from "~/models/jobs.server";
import { db } from "~/db/connection.server";
import { freshDatabase, type TestDatabase } from "../helpers/db";

describe("mail", () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await freshDatabase("sqlite");
  });
  afterAll(() => t.drop());

  it("goes through the job queue into the local mailbox when SMTP_URL is not set", async () => {
    await sendMail({ to: "ana@example.com", subject: "Hello", text: "Body" });
    expect(await listMailbox()).toEqual([]);
    expect(await runOnce("test")).toBe(true);
    const mails = await listMailbox();
    expect(mails).toHaveLength(1);
    expect(mails[0]).toMatchObject({ to: "ana@example.com", subject: "Hello", text: "Body" });
  });

  it("is delivered over SMTP to a real server, and retried while it is down", async () => {
    const received: string[] = [];
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ["STARTTLS"],
      onData(stream, _session, cb) {
        let raw = "";
        stream.on("data", (c: Buffer) => (raw += c.toString()));
        stream.on("end", () => {
          received.push(raw);
          cb();
        });
      },
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.server.address() as { port: number }).port;
    setConfig(loadConfig({ DATA_DIR: t.dataDir, KOALA_ENV: "development", SMTP_URL: `smtp://127.0.0.1:${port}`, LOG_LEVEL: "error" }));
    await deliver({ to: "bo@example.com", subject: "Over SMTP", text: "Real wire" });
    expect(received).toHaveLength(1);
    expect(received[0]).toContain("Subject: Over SMTP");
    expect(received[0]).toContain("Real wire");
    await new Promise<void>((r) => server.close(() => r()));

    // With the server gone, the job fails and is put back with a delay, not lost.
    setConfig(loadConfig({ DATA_DIR: t.dataDir, KOALA_ENV: "development", SMTP_URL: `smtp://127.0.0.1:${port}?connectionTimeout=2000`, LOG_LEVEL: "error" }));
    await sendMail({ to: "cy@example.com", subject: "Later", text: "x" });
    const job = await db().selectFrom("jobs").select("id").where("status", "=", "queued").executeTakeFirstOrThrow();
    await runOnce("test");
    expect(await getJob(job.id)).toMatchObject({ status: "queued", attempts: 1 });
  });
});
