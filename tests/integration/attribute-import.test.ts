import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { db } from "~/db/connection.server";
import { IMPORT_JOB } from "~/lib/job-types";
import { SYSTEM } from "~/models/actor";
import * as importModel from "~/models/attribute-import.server";
import * as gridModel from "~/models/grid.server";
import { claimJob, completeJob, getJob } from "~/models/jobs.server";
import { createAttribute, setAttributeValues } from "~/models/attributes.server";
import { insertImage } from "~/models/images.server";
import { projectScope } from "~/models/scope.server";
import { writeAttributesCsv } from "~/services/attribute-export.server";
import {
  checkCsv,
  ERROR_CAP,
  IMPORT_ABANDONED,
  IMPORT_STOPPED,
  importCsvFile,
  importSettings,
  importUploadedCsv,
} from "~/services/attribute-import.server";
import { jobRegistry } from "~/services/job-registry.server";
import { runOnce } from "~/services/jobs.server";
import * as mailService from "~/services/mail.server";
import { listMailbox } from "~/services/mail.server";
import { storage } from "~/services/storage.server";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";
import { makeProject, makeUser, meta, storedFakeFile } from "../helpers/fixtures";

/** Text as Windows-1252 bytes (the characters these tests use). */
const windows1252 = (text: string) =>
  Buffer.from([...text].map((c) => (c === "€" ? 0x80 : c.charCodeAt(0) < 256 ? c.charCodeAt(0) : 0x3f)));

/**
 * Import Attributes CSV in the service and models, on both dialects: what a good file sets, that a file with any error
 * changes nothing and says what and where (line numbers, capped), the spec's whole-file refusals, the background
 * job for a large file (its e-mail, its stored upload removed), and an export read back unchanged.
 */
describe.each(dialects)("attribute import (%s)", (dialect) => {
  let t: TestDatabase;
  let editor: Awaited<ReturnType<typeof makeUser>>;
  let viewer: Awaited<ReturnType<typeof makeUser>>;
  let projectId: number;
  let images: number[];
  let foreignImage: number;
  let channel: number;
  const dir = mkdtempSync(path.join(tmpdir(), "koala-import-"));
  let n = 0;
  const csvFile = (text: string | Buffer) => {
    const file = path.join(dir, `in-${n++}.csv`);
    writeFileSync(file, text);
    return file;
  };
  const scope = () => projectScope(editor.actor, projectId);
  const values = async () =>
    (
      await db()
        .selectFrom("image_attribute_values as v")
        .innerJoin("attributes as a", "a.id", "v.attribute_id")
        .select(["v.image_id", "a.name", "v.value"])
        .where("a.project_id", "=", projectId)
        .orderBy("v.image_id")
        .orderBy("a.name")
        .execute()
    ).map((r) => `${r.image_id}/${r.name}=${r.value}`);

  beforeAll(async () => {
    t = await freshDatabase(dialect);
    editor = await makeUser();
    viewer = await makeUser();
    projectId = (
      await makeProject([
        { actor: editor.actor, role: "editor" },
        { actor: viewer.actor, role: "viewer" },
      ])
    ).id;
    const system = await projectScope(SYSTEM, projectId);
    images = [];
    for (let i = 0; i < 3; i++) images.push(await insertImage(system, await storedFakeFile(700 + i), meta(`Photo ${i}`)));
    const stranger = await makeUser();
    const other = await makeProject([{ actor: stranger.actor }]);
    foreignImage = await insertImage(await projectScope(stranger.actor, other.id), await storedFakeFile(710), meta("Theirs"));
    await createAttribute(system, { name: "Region", code: "reg", type: 3 });
    channel = await createAttribute(system, { name: "Channel", code: "CHAN", type: 3 });
    await createAttribute(system, { name: "Source", code: "src", type: 1 });
  });
  afterAll(() => t.drop());
  beforeEach(async () => {
    await db().deleteFrom("image_attribute_values").execute();
    await setAttributeValues(await projectScope(SYSTEM, projectId), [{ imageId: images[0]!, attributeId: channel, value: "Store" }]);
  });

  it("applies a good file in full: names or smart names in any case, Title and Keywords left alone, an empty cell changes nothing", async () => {
    const file = csvFile(
      `\uFEFFImage ID,Title,region,chan\n${images[0]},ignored,North,\n${images[1]},"Quoted, title",South,Kiosk\n\n${images[2]},,East,Online\n`,
    );
    const report = await importCsvFile(await scope(), file);
    expect(report).toMatchObject({ outcome: "success", rows: 3, values: 5, errorCount: 0 });
    expect(await values()).toEqual([
      `${images[0]}/Channel=Store`,
      `${images[0]}/Region=North`,
      `${images[1]}/Channel=Kiosk`,
      `${images[1]}/Region=South`,
      `${images[2]}/Channel=Online`,
      `${images[2]}/Region=East`,
    ]);
    const title = await db().selectFrom("images").select("title").where("id", "=", images[0]!).executeTakeFirstOrThrow();
    expect(title.title).toBe("Photo 0");
  });

  it("reads each file in its encoding: UTF-8 with or without BOM, UTF-16 (LE, BE) with BOM, and Windows-1252 when not UTF-8", async () => {
    const text = `Image ID,Region,Channel\n${images[0]},Café,Crème brûlée\n${images[1]},Zürich,€ deal\n`;
    const utf16be = Buffer.from(`\uFEFF${text}`, "utf16le").swap16();
    const files: [string, Buffer][] = [
      ["UTF-8", Buffer.from(text, "utf8")],
      ["UTF-8 with BOM", Buffer.from(`\uFEFF${text}`, "utf8")],
      ["UTF-16LE with BOM", Buffer.from(`\uFEFF${text}`, "utf16le")],
      ["UTF-16BE with BOM", utf16be],
      // Excel's plain "CSV" on Windows: é is 0xE9, € is 0x80 (which Latin-1 proper has no character for).
      ["Windows-1252", windows1252(text)],
    ];
    for (const [name, bytes] of files) {
      await db().deleteFrom("image_attribute_values").execute();
      const report = await importCsvFile(await scope(), csvFile(bytes));
      expect(report, name).toMatchObject({ outcome: "success", rows: 2, values: 4 });
      expect(await values(), name).toEqual([
        `${images[0]}/Channel=Crème brûlée`,
        `${images[0]}/Region=Café`,
        `${images[1]}/Channel=€ deal`,
        `${images[1]}/Region=Zürich`,
      ]);
    }
  });

  it("refuses a file with characters that cannot be read ('File Read Error', each line named) and stores no U+FFFD", async () => {
    const before = await values();
    const cases: [string, Buffer, number[]][] = [
      // A UTF-8 BOM is believed: a Latin-1 é behind it cannot be read.
      [
        "UTF-8 BOM, Latin-1 bytes",
        Buffer.concat([Buffer.from(`\uFEFFImage ID,Region\n${images[0]},North\n${images[1]},Caf`), Buffer.from([0xe9, 0x0a])]),
        [3],
      ],
      // The replacement character already in the file: what it stood for is lost.
      ["U+FFFD in the file", Buffer.from(`Image ID,Region\n${images[0]},Caf\uFFFD\n${images[1]},North\n${images[2]},\uFFFD\n`), [2, 4]],
      // UTF-16 without its BOM reads as text full of NULs.
      ["UTF-16 without BOM", Buffer.from(`Image ID,Region\n${images[0]},North\n`, "utf16le"), [1]],
    ];
    for (const [name, bytes, lines] of cases) {
      const report = await importCsvFile(await scope(), csvFile(bytes));
      expect(report.outcome, name).toBe("unreadable");
      expect(
        report.errors.map((e) => e.line),
        name,
      ).toEqual(lines);
      expect(report.errors[0]!.message, name).toMatch(/could not be read .* save it as CSV UTF-8/);
      expect(await values(), name).toEqual(before);
    }
    const stored = await db().selectFrom("image_attribute_values").select("value").where("value", "like", "%\uFFFD%").execute();
    expect(stored).toEqual([]);
  });

  it("changes nothing when any row is wrong, and reports every error with its line: foreign image, bad value, extra cells", async () => {
    const before = await values();
    const file = csvFile(
      [
        "Image ID,Region,Channel",
        `${images[0]},North,Store`,
        `${foreignImage},North,`,
        `${images[1]},50%,`,
        `${images[2]},${"x".repeat(65)},Kiosk,extra`,
        // Past a 32-bit id: no image of any project (PostgreSQL refused the whole look-up before).
        "3000000000,North,",
      ].join("\n"),
    );
    const { report } = await checkCsv(await scope(), file);
    expect(report.outcome).toBe("errors");
    expect(report.errors).toEqual([
      { line: 3, message: `Image ID ${foreignImage} is not an image of this project` },
      { line: 4, message: "Region: Value cannot contain special characters" },
      { line: 5, message: "4 cells, but the header names 3 columns" },
      { line: 5, message: "Region: Value cannot be longer than 64 characters" },
      { line: 6, message: "Image ID 3000000000 is not an image of this project" },
    ]);
    expect((await importCsvFile(await scope(), file)).outcome).toBe("errors");
    expect(await values()).toEqual(before);
  });

  it("refuses a header naming an unknown column or one twice (a WSC attribute's column is left alone); lists errors only up to the cap", async () => {
    const header = await checkCsv(await scope(), csvFile(`Image ID,Region,Colour,Source,REG\n${images[0]},North,x,y,z\n`));
    expect(header.report.errors.map((e) => `${e.line}: ${e.message}`)).toEqual([
      '1: Unknown column "Colour": not an attribute of this project',
      '1: "Region" appears twice',
    ]);
    const wsc = await importCsvFile(await scope(), csvFile(`Image ID,Source,Region\n${images[2]},from the import,North\n`));
    expect(wsc).toMatchObject({ outcome: "success", values: 1 });
    await db().deleteFrom("image_attribute_values").where("image_id", "=", images[2]!).execute();
    const many = await checkCsv(
      await scope(),
      csvFile(`Image ID,Region\n${Array.from({ length: 150 }, () => `${images[0]},a|b`).join("\n")}\n`),
    );
    expect(many.report.errorCount).toBe(150);
    expect(many.report.errors).toHaveLength(ERROR_CAP);
    expect(many.report.errors[0]).toEqual({ line: 2, message: "Region: Value cannot contain special characters" });
  });

  it("answers the spec's whole-file refusals: no image ID in the first column, and data that cannot be parsed", async () => {
    const before = await values();
    const noId = await importCsvFile(await scope(), csvFile(`Image ID,Region\n${images[0]},North\nPhoto 1,South\n`));
    expect(noId).toMatchObject({
      outcome: "no-image-id",
      errors: [{ line: 3, message: "Image ID is not present in first column for all images" }],
    });
    const unparseable = await importCsvFile(await scope(), csvFile(`Image ID,Region\n${images[0]},"North\n`));
    expect(unparseable.outcome).toBe("unparseable");
    expect(unparseable.errors[0]!.message).toMatch(/^CSV Data could not be parsed/);
    const empty = await importCsvFile(await scope(), csvFile("Image ID,Region\n"));
    expect(empty.outcome).toBe("no-image-id");
    expect(await values()).toEqual(before);
  });

  it("refuses a viewer's import in the model, whatever the file", async () => {
    await expect(
      importCsvFile(await projectScope(viewer.actor, projectId), csvFile(`Image ID,Region\n${images[0]},North\n`)),
    ).rejects.toMatchObject({
      status: 403,
    });
  });

  it("reads its own export back unchanged, a value the export escaped as a formula ('-20) included", async () => {
    await setAttributeValues(await projectScope(SYSTEM, projectId), [{ imageId: images[1]!, attributeId: channel, value: "-20" }]);
    const exported = path.join(dir, "export.csv");
    await writeAttributesCsv(await scope(), { all: true, ids: [] }, exported);
    expect(readFileSync(exported, "utf8")).toContain(`${images[1]},Photo 1,,'-20`);
    await db().deleteFrom("image_attribute_values").execute();
    const report = await importCsvFile(await scope(), exported);
    expect(report).toMatchObject({ outcome: "success", rows: 3, values: 2 });
    expect(await values()).toEqual([`${images[0]}/Channel=Store`, `${images[1]}/Channel=-20`]);
  });

  it("takes a header cell as a name first and a smart name only when no name matches; refuses a smart name two share", async () => {
    const system = await projectScope(SYSTEM, projectId);
    // "Channel" is Channel's name and also Shade's smart name: the name wins.
    const shade = await createAttribute(system, { name: "Shade", code: "Channel", type: 3 });
    await createAttribute(system, { name: "Tone_a", code: "tone", type: 3 });
    await createAttribute(system, { name: "Tone_b", code: "TONE", type: 3 });
    try {
      const report = await importCsvFile(await scope(), csvFile(`Image ID,Channel\n${images[2]},Kiosk\n`));
      expect(report.outcome).toBe("success");
      expect(await values()).toContain(`${images[2]}/Channel=Kiosk`);
      const ambiguous = await checkCsv(await scope(), csvFile(`Image ID,tone\n${images[2]},Warm\n`));
      expect(ambiguous.report.errors).toEqual([{ line: 1, message: '"tone" is the smart name of more than one attribute: use the name' }]);
      const noHeader = await checkCsv(await scope(), csvFile(`${images[2]},Kiosk\n`));
      expect(noHeader.report).toMatchObject({
        outcome: "no-image-id",
        errors: [{ line: 1, message: "Image ID is not present in first column for all images" }],
      });
      expect(shade).toBeGreaterThan(0);
    } finally {
      await db().deleteFrom("attributes").where("name", "in", ["Shade", "Tone_a", "Tone_b"]).execute();
    }
  });

  it("closes the file when a bad header or a parse error stops the reading early (no descriptor left open)", async () => {
    const open = () => readdirSync("/proc/self/fd").length;
    const before = open();
    const body = `${images[0]},North\n`.repeat(20_000);
    for (let i = 0; i < 10; i++) {
      await checkCsv(await scope(), csvFile(`Image ID,Nosuch\n${body}`));
      await checkCsv(await scope(), csvFile(`Image ID,Region\n${images[0]},"North\n${body}`));
    }
    await new Promise((r) => setTimeout(r, 50));
    expect(open()).toBeLessThanOrEqual(before + 2);
  });

  it("leaves a large file to a job: applied, an e-mail with the summary, the stored upload removed", async () => {
    const saved = importSettings.inlineMaxBytes;
    importSettings.inlineMaxBytes = 10;
    try {
      const file = csvFile(`Image ID,Region\n${images[1]},West\n${images[2]},West\n`);
      const answer = await importUploadedCsv(await scope(), file, "regions.csv");
      expect("jobId" in answer).toBe(true);
      const job = await db()
        .selectFrom("jobs")
        .select("payload")
        .where("id", "=", (answer as { jobId: number }).jobId)
        .executeTakeFirstOrThrow();
      const key = (JSON.parse(job.payload) as { key: string }).key;
      expect(await storage().size(key)).toBeGreaterThan(0);
      while (await runOnce(jobRegistry, "import-test"));
      expect(await values()).toEqual([`${images[0]}/Channel=Store`, `${images[1]}/Region=West`, `${images[2]}/Region=West`]);
      const mail = (await listMailbox()).find((m) => m.subject.includes("regions.csv"));
      expect(mail?.to).toBe(editor.user.email);
      expect(mail?.text).toContain("Imported: 2 values from 2 rows.");
      expect(await storage().size(key)).toBeNull();
    } finally {
      importSettings.inlineMaxBytes = saved;
    }
  });

  describe("a job interrupted mid-way", () => {
    const saved = { ...importSettings };
    const realImportValues = importModel.importValues;
    /** The image ids of each batch written (committed), in order. */
    let written: number[][];
    beforeEach(() => {
      Object.assign(importSettings, { inlineMaxBytes: 10, writeBatch: 2 });
      written = [];
    });
    afterEach(() => {
      Object.assign(importSettings, saved);
      vi.restoreAllMocks();
    });
    /** Before each batch, `interrupt(n)` (the batch's number, from 1) may throw or take the job's lease away. */
    const spyOnWrites = (interrupt: (n: number) => Promise<void>) => {
      let n = 0;
      vi.spyOn(importModel, "importValues").mockImplementation(async (scope, batch, commitWith) => {
        await interrupt(++n);
        const answer = await realImportValues(scope, batch, commitWith);
        written.push(batch.map((v) => v.imageId));
        return answer;
      });
    };
    /** Three rows of two values each: three batches of writeBatch=2. */
    const queueImport = async () => {
      const file = csvFile(`Image ID,Region,Channel\n${images.map((id, i) => `${id},R${i},C${i}`).join("\n")}\n`);
      const answer = await importUploadedCsv(await scope(), file, `resume-${n}.csv`);
      return (answer as { jobId: number }).jobId;
    };
    const expected = () => images.flatMap((id, i) => [`${id}/Channel=C${i}`, `${id}/Region=R${i}`]);

    it("fails an attempt after a batch, then resumes from its checkpoint: each row written once, the check not run again", async () => {
      const checks = vi.spyOn(gridModel, "idsInScope");
      spyOnWrites(async (batch) => {
        if (batch === 2 && written.length === 1) throw new Error("Connection terminated unexpectedly");
      });
      const id = await queueImport();
      expect((await getJob(id))?.max_attempts).toBe(3);
      await runOnce(jobRegistry, "import-test");
      const failed = (await getJob(id))!;
      expect(failed).toMatchObject({ status: "queued", attempts: 1, last_error: "Connection terminated unexpectedly" });
      expect(JSON.parse(failed.checkpoint!)).toMatchObject({ rows: 1, written: 2, skipped: 0 });
      expect(written).toEqual([[images[0], images[0]]]);
      expect(checks).toHaveBeenCalledTimes(1);
      const key = (JSON.parse(failed.payload) as { key: string }).key;
      expect(await storage().size(key)).toBeGreaterThan(0); // kept for the next attempt
      expect(await values()).toEqual([`${images[0]}/Channel=C0`, `${images[0]}/Region=R0`]);

      await db().updateTable("jobs").set({ run_at: 0 }).where("id", "=", id).execute(); // its backoff over
      await runOnce(jobRegistry, "import-test");
      const done = (await getJob(id))!;
      expect(done).toMatchObject({ status: "done", attempts: 2, checkpoint: null });
      // The retry began at the second row: no row read into a batch twice, none checked again.
      expect(written).toEqual(images.map((id) => [id, id]));
      expect(checks).toHaveBeenCalledTimes(1);
      expect(await values()).toEqual(expected());
      expect(JSON.parse(done.result!)).toMatchObject({ report: { outcome: "success", rows: 3, values: 6 } });
      const mails = (await listMailbox()).filter(
        (m) => m.subject.includes(`resume-`) && m.text.includes("Imported: 6 values from 3 rows."),
      );
      expect(mails).toHaveLength(1);
      expect(await storage().size(key)).toBeNull();
    });

    it("fails for good when its last attempt fails while writing: the importer told the completed batches stay written, never that nothing changed", async () => {
      spyOnWrites(async (batch) => {
        if (batch === 2) throw new Error("Connection terminated unexpectedly");
      });
      const id = await queueImport();
      const file = (JSON.parse((await getJob(id))!.payload) as { fileName: string }).fileName;
      await db().updateTable("jobs").set({ max_attempts: 1 }).where("id", "=", id).execute();
      await runOnce(jobRegistry, "import-test");
      expect(await getJob(id)).toMatchObject({ status: "done", attempts: 1 });
      expect(await values()).toEqual([`${images[0]}/Channel=C0`, `${images[0]}/Region=R0`]);
      const mails = (await listMailbox()).filter((m) => m.subject === `Attribute import failed: ${file}`);
      expect(mails).toHaveLength(1);
      expect(mails[0]!.text).toContain(IMPORT_STOPPED);
      expect(mails[0]!.text).not.toContain("nothing was changed");
    });

    it("abandoned when its worker dies on the last attempt: failed for good, the stored upload removed, the importer told by e-mail", async () => {
      const file = csvFile(`Image ID,Region\n${images.map((id, i) => `${id},A${i}`).join("\n")}\n`);
      const id = ((await importUploadedCsv(await scope(), file, "abandoned.csv")) as { jobId: number }).jobId;
      await db().updateTable("jobs").set({ max_attempts: 1 }).where("id", "=", id).execute();
      expect((await claimJob("dead-worker", [IMPORT_JOB]))?.id).toBe(id); // its one attempt, then the process is gone
      const key = (JSON.parse((await getJob(id))!.payload) as { key: string }).key;
      expect(await storage().size(key)).toBeGreaterThan(0);
      await db().updateTable("jobs").set({ locked_at: 0 }).where("id", "=", id).execute(); // its lease ran out

      expect(await runOnce(jobRegistry, "survivor")).toBe(false);
      expect(await getJob(id)).toMatchObject({ status: "failed", attempts: 1, last_error: "The worker running it stopped." });
      expect(await storage().size(key)).toBeNull();
      const mails = (await listMailbox()).filter((m) => m.subject === "Attribute import failed: abandoned.csv");
      expect(mails).toHaveLength(1);
      expect(mails[0]!.text).toContain(IMPORT_ABANDONED);
    });

    it("audits and mails once when an attempt dies between its last batch and its e-mail: the next finds the import finished", async () => {
      const send = vi.spyOn(mailService, "deliver").mockRejectedValueOnce(new Error("the process died here"));
      spyOnWrites(async () => {});
      const id = await queueImport();
      const file = (JSON.parse((await getJob(id))!.payload) as { fileName: string }).fileName;
      await runOnce(jobRegistry, "import-test");
      expect(await getJob(id)).toMatchObject({ status: "queued", attempts: 1 });
      expect(JSON.parse((await getJob(id))!.checkpoint!)).toMatchObject({ finished: { outcome: "success", values: 6 } });
      await db().updateTable("jobs").set({ run_at: 0 }).where("id", "=", id).execute();
      await runOnce(jobRegistry, "import-test");
      expect(await getJob(id)).toMatchObject({ status: "done", attempts: 2, last_error: null });
      expect(written).toEqual(images.map((i) => [i, i])); // every batch once
      const audits = await db().selectFrom("audit_log").select("detail").where("action", "=", "attributes.imported").execute();
      expect(audits.filter((a) => a.detail.includes(file))).toHaveLength(1);
      expect(send).toHaveBeenCalledTimes(2); // the attempt that died, and the one that finished
      expect((await listMailbox()).filter((m) => m.subject === `Attribute import done: ${file}`)).toHaveLength(1);
    });

    it("stops a worker whose lease was taken over: its next batch is not written, and the new holder resumes after the last batch committed", async () => {
      let takenOver: Awaited<ReturnType<typeof claimJob>> = null;
      let id = 0;
      spyOnWrites(async (batch) => {
        if (batch !== 2 || takenOver) return;
        // The first worker stalls past its lease; a second one takes the job.
        await db().updateTable("jobs").set({ locked_at: 0 }).where("id", "=", id).execute();
        takenOver = await claimJob("second-worker", [IMPORT_JOB]);
      });
      id = await queueImport();
      await runOnce(jobRegistry, "first-worker");
      expect(takenOver).toMatchObject({ id, attempts: 2, locked_by: "second-worker" });
      // The first worker's second batch was refused with its checkpoint; the job is the second worker's still.
      expect(written).toEqual([[images[0], images[0]]]);
      expect(await getJob(id)).toMatchObject({ status: "running", locked_by: "second-worker", attempts: 2 });
      const job = takenOver!;
      const result = await jobRegistry[IMPORT_JOB]!.run(JSON.parse(job.payload), job);
      expect(await completeJob(job, result)).toBe(true);
      expect(written).toEqual(images.map((id) => [id, id]));
      expect(await values()).toEqual(expected());
      expect(result).toMatchObject({ report: { outcome: "success", rows: 3, values: 6 } });
    });
  });
});
