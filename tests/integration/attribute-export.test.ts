import { parse } from "csv-parse/sync";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { loadConfig, setConfig } from "~/config.server";
import { db } from "~/db/connection.server";
import { EXPORT_JOB } from "~/lib/job-types";
import { exportFor } from "~/models/attribute-exports.server";
import * as jobsModel from "~/models/jobs.server";
import { getJob } from "~/models/jobs.server";
import { createAttribute, setAttributeValues } from "~/models/attributes.server";
import { insertImage } from "~/models/images.server";
import { projectScope } from "~/models/scope.server";
import { requestAttributeExport, sweepExpiredExports } from "~/services/attribute-export.server";
import { jobRegistry } from "~/services/job-registry.server";
import { runOnce } from "~/services/jobs.server";
import { storage } from "~/services/storage.server";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";
import { makeProject, makeUser, meta, storedFakeFile } from "../helpers/fixtures";
import { startSmtp } from "../helpers/smtp";

/**
 * Export attributes by e-mail, end to end through the job queue to a real SMTP server on loopback: the CSV's columns,
 * its BOM, formula cells escaped (read back with csv-parse), attached when small, a link for its owner only when large,
 * and the file gone once the link expires.
 */
const received: string[] = [];
let smtp: Awaited<ReturnType<typeof startSmtp>>;
let port = 0;
beforeAll(async () => {
  smtp = await startSmtp(received);
  port = smtp.port;
});
afterAll(() => smtp.close());

/** The attachment of a raw message, decoded (nodemailer writes it base64). */
function attachmentOf(raw: string): { name: string; bytes: Buffer } {
  const m = /Content-Disposition: attachment;\s*filename="?([^"\r\n]+)"?\r\n(?:[^\r\n]+\r\n)*\r\n([\s\S]*?)\r\n--/.exec(raw);
  if (!m) throw new Error("no attachment");
  return { name: m[1]!, bytes: Buffer.from(m[2]!.replace(/\s+/g, ""), "base64") };
}

describe.each(dialects)("attribute export by e-mail (%s)", (dialect) => {
  let t: TestDatabase;
  let owner: Awaited<ReturnType<typeof makeUser>>;
  let other: Awaited<ReturnType<typeof makeUser>>;
  let projectId: number;
  let images: number[];
  const configure = (attachMax: number) =>
    setConfig(
      loadConfig({
        DATA_DIR: t.dataDir,
        KOALA_ENV: "development",
        SMTP_URL: `smtp://127.0.0.1:${port}`,
        LOG_LEVEL: "error",
        EXPORT_ATTACH_MAX_BYTES: String(attachMax),
      }),
    );
  const mailTo = async (email: string, since: number) => {
    while (await runOnce(jobRegistry, "export-test"));
    return received.slice(since).find((m) => m.includes(email));
  };

  beforeAll(async () => {
    t = await freshDatabase(dialect);
    configure(1_000_000);
    owner = await makeUser();
    other = await makeUser();
    const project = await makeProject([
      { actor: owner.actor, role: "viewer" },
      { actor: other.actor, role: "manager" },
    ]);
    projectId = project.id;
    const scope = await projectScope(other.actor, projectId);
    images = [];
    for (const [i, title] of ["Cola shelf", "Zoë's kiosk", "=cmd|' /C calc'!A0"].entries())
      images.push(await insertImage(scope, await storedFakeFile(500 + i), meta(title, i === 0 ? ["shelf", "cola"] : [])));
    const region = await createAttribute(scope, { name: "Region", type: 3 });
    const channel = await createAttribute(scope, { name: "Channel", type: 3 });
    await setAttributeValues(scope, [
      { imageId: images[0]!, attributeId: region, value: "North" },
      { imageId: images[1]!, attributeId: region, value: "+SUM(A1:A9)" },
      { imageId: images[1]!, attributeId: channel, value: "Kiosk" },
    ]);
  });
  afterAll(() => t.drop());

  it("mails a small export as a UTF-8 CSV attachment with a BOM: id, title, keywords, every attribute; formula cells escaped", async () => {
    configure(1_000_000);
    const since = received.length;
    // A viewer may export: it only reads.
    expect(await requestAttributeExport(await projectScope(owner.actor, projectId), { all: true, ids: [] })).toBe(3);
    const mail = await mailTo(owner.user.email, since);
    expect(mail).toContain("Subject: Image attributes:");
    const { name, bytes } = attachmentOf(mail!);
    expect(name).toMatch(/-attributes-\d{4}-\d{2}-\d{2}\.csv$/);
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const rows = parse(bytes.toString("utf8").slice(1)) as string[][];
    expect(rows).toEqual([
      ["Image ID", "Title", "Keywords", "Channel", "Region"],
      [String(images[0]), "Cola shelf", "shelf, cola", "", "North"],
      [String(images[1]), "Zoë's kiosk", "", "Kiosk", "'+SUM(A1:A9)"],
      [String(images[2]), "'=cmd|' /C calc'!A0", "", "", ""],
    ]);
  });

  it("mails an export once when its attempt dies after the e-mail went: the next attempt finds it sent", async () => {
    configure(1_000_000);
    const since = received.length;
    const died = vi.spyOn(jobsModel, "completeJob").mockRejectedValueOnce(new Error("the process died here"));
    try {
      await requestAttributeExport(await projectScope(owner.actor, projectId), { all: false, ids: [images[1]!] });
      const job = await db().selectFrom("jobs").select("id").where("type", "=", EXPORT_JOB).orderBy("id", "desc").executeTakeFirstOrThrow();
      await runOnce(jobRegistry, "export-test"); // mails, then dies before the job is marked done
      expect(await getJob(job.id)).toMatchObject({ status: "queued", attempts: 1 });
      await db().updateTable("jobs").set({ run_at: 0 }).where("id", "=", job.id).execute();
      while (await runOnce(jobRegistry, "export-test"));
      expect(await getJob(job.id)).toMatchObject({ status: "done", attempts: 2 });
      expect(JSON.parse((await getJob(job.id))!.result!)).toEqual({ rows: 1, size: expect.any(Number) });
      expect(received.slice(since).filter((m) => m.includes(owner.user.email) && m.includes("Subject: Image attributes:"))).toHaveLength(1);
    } finally {
      died.mockRestore();
    }
  });

  it("sends a large export as a link that opens only for its owner, and only until it expires; then the file is swept", async () => {
    configure(0);
    const since = received.length;
    await requestAttributeExport(await projectScope(owner.actor, projectId), { all: false, ids: [images[0]!] });
    const mail = (await mailTo(owner.user.email, since))!;
    expect(mail).not.toContain("Content-Disposition: attachment");
    const token = /\/exports\/([\w-]+)/.exec(mail.replace(/=\r\n/g, ""))![1]!;
    const row = await exportFor(owner.user.id, token);
    expect(row).not.toBeNull();
    expect(await exportFor(other.user.id, token)).toBeNull();
    expect(await exportFor(owner.user.id, `${token}x`)).toBeNull();
    const object = (await storage().get(row!.storage_key))!;
    let text = "";
    for await (const chunk of object.stream) text += (chunk as Buffer).toString("utf8");
    expect(parse(text.slice(1))).toEqual([
      ["Image ID", "Title", "Keywords", "Channel", "Region"],
      [String(images[0]), "Cola shelf", "shelf, cola", "", "North"],
    ]);
    await db()
      .updateTable("attribute_exports")
      .set({ expires_at: Date.now() - 1 })
      .execute();
    expect(await exportFor(owner.user.id, token)).toBeNull();
    await sweepExpiredExports();
    expect(await db().selectFrom("attribute_exports").selectAll().execute()).toEqual([]);
    expect(await storage().get(row!.storage_key)).toBeNull();
  });

  it("refuses a selection with an image outside the project as a whole, and queues nothing", async () => {
    const stranger = await makeUser();
    const theirs = await makeProject([{ actor: stranger.actor }]);
    const foreign = await insertImage(await projectScope(stranger.actor, theirs.id), await storedFakeFile(600), meta("Theirs"));
    const before = await db().selectFrom("jobs").select("id").where("type", "=", "attributes.export").execute();
    await expect(
      requestAttributeExport(await projectScope(owner.actor, projectId), { all: false, ids: [images[0]!, foreign] }),
    ).rejects.toMatchObject({ status: 404 });
    expect(await db().selectFrom("jobs").select("id").where("type", "=", "attributes.export").execute()).toEqual(before);
  });
});
