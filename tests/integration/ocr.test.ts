import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import path from "node:path";
import { setTimeout } from "node:timers/promises";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig, setConfig } from "~/config.server";
import { db } from "~/db/connection.server";
import { OCR_JOB } from "~/lib/job-types";
import { ConflictError, NotAllowedError } from "~/lib/errors";
import { decodeCursor, gridPage } from "~/models/grid.server";
import { StaleEdit, updateImage } from "~/models/image-edits.server";
import { hasPendingJob } from "~/models/jobs.server";
import { MACHINE_READ, ocrTarget, requestOcr, saveMachineText } from "~/models/image-ocr.server";
import { insertImageRows, parseImage } from "~/models/images.server";
import { queueReimport } from "~/models/reimport.server";
import { projectScope, withFilter } from "~/models/scope.server";
import { storeImageFile } from "~/services/image-files.server";
import { addImageFile, saveImageEdit } from "~/services/ingest.server";
import { jobRegistry } from "~/services/job-registry.server";
import { runOnce, startRunner } from "~/services/jobs.server";
import { closeOcr, ocrSlots } from "~/services/ocr.server";
import { readObject, storage } from "~/services/storage.server";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";
import { makeProject, makeUser, meta } from "../helpers/fixtures";

const FIXTURES = path.join(__dirname, "../fixtures/ocr");
const picture = (file: string) => readFileSync(path.join(FIXTURES, file));
// clean-04.jpg says "Urban Roast / Sparkling water 2.51 / SAVE 30% / TOTAL 20.54 EUR" (truth.json).
const RECEIPT = "clean-04.jpg";

const drain = async () => {
  while (await runOnce(jobRegistry, "ocr-test"));
};
const image = async (id: number) => db().selectFrom("images").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
const ocrJobs = () => db().selectFrom("jobs").selectAll().where("type", "=", OCR_JOB).orderBy("id").execute();

describe.each(dialects)("OCR of images (%s)", (dialect) => {
  let t: TestDatabase;
  let editor: Awaited<ReturnType<typeof makeUser>>;
  let viewer: Awaited<ReturnType<typeof makeUser>>;
  let manager: Awaited<ReturnType<typeof makeUser>>;
  let projectId: number;
  const scope = () => projectScope(editor.actor, projectId);

  beforeAll(async () => {
    t = await freshDatabase(dialect, { OCR: "on" });
    editor = await makeUser();
    viewer = await makeUser();
    manager = await makeUser();
    projectId = (
      await makeProject([
        { actor: editor.actor, role: "editor" },
        { actor: viewer.actor, role: "viewer" },
        { actor: manager.actor, role: "manager" },
      ])
    ).id;
  });
  afterAll(async () => {
    await closeOcr();
    await t.drop();
  });

  it("reads a new image's text into its OCR field, as the machine's, in a version by no one, and keyword search finds a word only in the picture", async () => {
    const id = await addImageFile(await scope(), picture(RECEIPT), meta("Shelf photo"));
    expect((await image(id)).ocr_text).toBe("");
    await drain();
    const read = await image(id);
    expect(read.ocr_text).toContain("Urban Roast");
    expect(read.ocr_text).toContain("TOTAL 20.54 EUR");
    expect(read).toMatchObject({ ocr_by_machine: 1, version: 2 });
    const version = await db()
      .selectFrom("image_versions")
      .selectAll()
      .where("image_id", "=", id)
      .where("version", "=", 2)
      .executeTakeFirstOrThrow();
    expect(version).toMatchObject({ changed_by: null, changes: JSON.stringify([MACHINE_READ]), ocr_text: read.ocr_text });
    const page = await gridPage(withFilter(await scope(), new URLSearchParams({ q: "sparkling" })), {
      after: decodeCursor(null),
      limit: 10,
    });
    expect(page.cards.map((c) => c.id)).toEqual([id]);
  });

  it("a runner takes one OCR job more than the pool has threads where a core is left over, and every one is read", async () => {
    // OCR_CONCURRENCY is 1 here: two slots on a machine of two cores or more.
    expect(ocrSlots()).toBe(availableParallelism() > 1 ? 2 : 1);
    const ids = [];
    for (const file of ["clean-01.jpg", "clean-02.jpg", "clean-03.jpg"])
      ids.push(await addImageFile(await scope(), picture(file), meta(file)));
    const running = () => db().selectFrom("jobs").select("id").where("type", "=", OCR_JOB).where("status", "=", "running").execute();
    // No shared slots: OCR's own only.
    const runner = startRunner(jobRegistry, { concurrency: 0, pollMs: 50 });
    let most = 0;
    try {
      while (await hasPendingJob(OCR_JOB)) {
        most = Math.max(most, (await running()).length);
        await setTimeout(10);
      }
    } finally {
      await runner.stop();
    }
    expect(most).toBe(ocrSlots());
    const texts = await Promise.all(ids.map(async (id) => (await image(id)).ocr_text));
    expect(texts[0]).toContain("Whole wheat bread");
    expect(texts[1]).toContain("Alpine Water");
    expect(texts[2]).toContain("Nordic Dairy");
  }, 60_000);

  it("never overwrites a person's text: none is read for an image that came with one, nor after a person writes one before the job runs", async () => {
    const given = await addImageFile(await scope(), picture("clean-06.jpg"), meta("With text", [], "Written by hand"));
    const later = await addImageFile(await scope(), picture("clean-07.jpg"), meta("Text added later"));
    const row = parseImage(await image(later));
    await updateImage(await scope(), row, { title: row.title, description: "", keywords: [], ocrText: "Typed before the reading" });
    await drain();
    expect(await image(given)).toMatchObject({ ocr_text: "Written by hand", ocr_by_machine: 0, version: 1 });
    expect(await image(later)).toMatchObject({ ocr_text: "Typed before the reading", ocr_by_machine: 0, version: 2 });
    // "Read text again" leaves a person's text alone too.
    await expect(requestOcr(await scope(), (await ocrTarget(later))!)).rejects.toBeInstanceOf(ConflictError);
  });

  it("saves a person's form loaded before the reading without a conflict: the machine's text kept when they left the field, theirs when they wrote it", async () => {
    const id = await addImageFile(await scope(), picture("clean-08.jpg"), meta("Before"));
    await drain();
    const current = parseImage(await image(id));
    expect(current.version).toBe(2);
    const v3 = await updateImage(
      await scope(),
      current,
      { title: "After", description: "", keywords: [], ocrText: "" },
      { expectedVersion: 1 },
    );
    expect(v3).toBe(3);
    expect(await image(id)).toMatchObject({ title: "After", ocr_text: current.ocr_text, ocr_by_machine: 1 });

    // Typed in the upload's Edit Image while the picture was being read: the person's text wins, and is theirs.
    const typed = await addImageFile(await scope(), picture("clean-03.jpg"), meta("Typed meanwhile"));
    await drain();
    const read = parseImage(await image(typed));
    await updateImage(
      await scope(),
      read,
      { title: "Typed meanwhile", description: "", keywords: [], ocrText: "Mine" },
      { expectedVersion: 1 },
    );
    expect(await image(typed)).toMatchObject({ ocr_text: "Mine", ocr_by_machine: 0, version: 3 });

    // A person's edit in between is a real conflict still.
    const edited = parseImage(await image(id));
    await updateImage(await scope(), edited, { title: "Someone else", description: "", keywords: [], ocrText: edited.ocr_text });
    await expect(
      updateImage(
        await scope(),
        parseImage(await image(id)),
        { title: "Mine", description: "", keywords: [], ocrText: "" },
        { expectedVersion: 1 },
      ),
    ).rejects.toBeInstanceOf(StaleEdit);
  });

  it("saves a person's edit when a reading is saved between the save's read of the image and its write, over the reading; a person's change between is a conflict still", async () => {
    const id = await addImageFile(await scope(), picture("clean-08.jpg"), meta("Raced"));
    const readBySave = parseImage(await image(id));
    expect(readBySave.version).toBe(1);
    await drain(); // the machine's reading commits after the save read the image, before its write
    const read = await image(id);
    expect(read).toMatchObject({ version: 2, ocr_by_machine: 1 });
    expect(read.ocr_text).not.toBe("");
    const saved = await updateImage(
      await scope(),
      readBySave,
      { title: "Raced, then saved", description: "", keywords: [], ocrText: "" },
      { expectedVersion: 1 },
    );
    expect(saved).toBe(3);
    expect(await image(id)).toMatchObject({ title: "Raced, then saved", ocr_text: read.ocr_text, ocr_by_machine: 1, version: 3 });

    const readAgain = parseImage(await image(id));
    await updateImage(await scope(), readAgain, { title: "Someone else", description: "", keywords: [], ocrText: readAgain.ocr_text });
    await expect(
      updateImage(
        await scope(),
        readAgain,
        { title: "Mine", description: "", keywords: [], ocrText: readAgain.ocr_text },
        { expectedVersion: 3 },
      ),
    ).rejects.toBeInstanceOf(StaleEdit);
    expect(await image(id)).toMatchObject({ title: "Someone else", version: 4 });
  });

  it("writes nothing from a reading that finishes after a person wrote or cleared the text, or the image was turned", async () => {
    const id = await addImageFile(await scope(), picture("clean-02.jpg"), meta("Raced"));
    const unread = (await ocrTarget(id))!;
    const row = parseImage(await image(id));
    await updateImage(await scope(), row, { title: row.title, description: "", keywords: [], ocrText: "Typed while reading" });
    expect(await saveMachineText(unread, "Alpine Water")).toBeNull();
    expect(await image(id)).toMatchObject({ ocr_text: "Typed while reading", ocr_by_machine: 0, version: 2 });

    const read = await addImageFile(await scope(), picture("clean-05.jpg"), meta("Cleared"));
    await drain();
    const machine = (await ocrTarget(read))!;
    expect(machine.ocr_by_machine).toBe(1);
    const readRow = parseImage(await image(read));
    await updateImage(await scope(), readRow, { title: readRow.title, description: "", keywords: [], ocrText: "" });
    expect(await saveMachineText(machine, "Fresh Fields again")).toBeNull();
    expect(await image(read)).toMatchObject({ ocr_text: "", ocr_by_machine: 0 });

    const turned = await addImageFile(await scope(), picture("clean-06.jpg"), meta("Turned while reading"));
    const before = (await ocrTarget(turned))!;
    const turnedRow = parseImage(await image(turned));
    await saveImageEdit(await scope(), turnedRow, { title: turnedRow.title, description: "", keywords: [], ocrText: "" }, 90);
    expect(await saveMachineText(before, "read from the old picture")).toBeNull();
    expect((await image(turned)).ocr_text).toBe("");
    await drain();
  });

  it("reads the picture upright: EXIF orientation applied, and read again after an editor turns it", async () => {
    // Pixels stored turned a quarter; the EXIF tag (6: turn 90° clockwise to show) makes the preview upright.
    const sideways = await sharp(picture(RECEIPT)).rotate(-90).withMetadata({ orientation: 6 }).jpeg().toBuffer();
    const tagged = await addImageFile(await scope(), sideways, meta("Tagged sideways"));
    // The same pixels without the tag: shown (and read) on their side until an editor turns them.
    const untagged = await sharp(picture(RECEIPT)).rotate(-90).jpeg().toBuffer();
    const turned = await addImageFile(await scope(), untagged, meta("Turned by hand"));
    await drain();
    expect((await image(tagged)).ocr_text).toContain("Urban Roast");
    expect((await image(turned)).ocr_text).not.toContain("Urban Roast");
    await saveImageEdit(
      await scope(),
      parseImage(await image(turned)),
      { title: "Turned by hand", description: "", keywords: [], ocrText: (await image(turned)).ocr_text },
      90,
    );
    await drain();
    expect((await image(turned)).ocr_text).toContain("Urban Roast");
  });

  it("retries a reading whose preview could not be read, and fails a damaged one for good at once, the image unchanged", async () => {
    const id = await addImageFile(await scope(), picture("clean-09.jpg"), meta("Missing preview"));
    const row = await image(id);
    const bytes = (await readObject(storage(), row.preview_key, 1e8))!.bytes;
    await storage().delete(row.preview_key);
    await drain();
    let job = (await ocrJobs()).at(-1)!;
    expect(job).toMatchObject({ status: "queued", attempts: 1 });
    expect(job.last_error).toContain("could not be read");
    await storage().put(row.preview_key, bytes);
    await db().updateTable("jobs").set({ run_at: Date.now() }).where("id", "=", job.id).execute();
    await drain();
    expect(await image(id)).toMatchObject({ ocr_by_machine: 1, version: 2 });
    expect((await ocrJobs()).at(-1)).toMatchObject({ status: "done", attempts: 2 });

    const damaged = await addImageFile(await scope(), picture("clean-10.jpg"), meta("Damaged preview"));
    await storage().put((await image(damaged)).preview_key, Buffer.from("RIFF\0\0\0\0WEBPVP8 not really"));
    await drain();
    job = (await ocrJobs()).at(-1)!;
    expect(job).toMatchObject({ status: "failed", attempts: 1 });
    expect(job.last_error).toContain("could not be decoded");
    expect(await image(damaged)).toMatchObject({ ocr_text: "", ocr_by_machine: 0, version: 1 });
  });

  it("gives up on a reading after its three attempts, the image unchanged and its field still the machine's to fill", async () => {
    const id = await addImageFile(await scope(), picture("clean-14.jpg"), meta("Preview gone for good"));
    await storage().delete((await image(id)).preview_key);
    for (let attempt = 1; attempt <= 3; attempt++) {
      await db().updateTable("jobs").set({ run_at: Date.now() }).where("type", "=", OCR_JOB).where("status", "=", "queued").execute();
      await drain();
      expect((await ocrJobs()).at(-1)).toMatchObject({ attempts: attempt, status: attempt < 3 ? "queued" : "failed" });
    }
    expect(await image(id)).toMatchObject({ ocr_text: "", ocr_by_machine: 0, ocr_read_key: null, version: 1 });
  });

  it("a files re-import reads the pictures the machine has not read (images stored before OCR), never a person's text, and none twice", async () => {
    const s = await projectScope(manager.actor, projectId);
    // Read on upload: marked as read in its picture.
    const read = await addImageFile(s, picture("clean-15.jpg"), meta("Read on upload"));
    await drain();
    expect((await image(read)).ocr_read_key).toBe((await image(read)).preview_key);
    // Stored as before OCR: rows only, no reading queued; one with a person's text, one with no words to read.
    const blank = await sharp({ create: { width: 400, height: 300, channels: 3, background: "#8a9" } })
      .jpeg()
      .toBuffer();
    const stored = await Promise.all(
      [picture(RECEIPT), picture("clean-16.jpg"), blank, picture("clean-01.jpg"), picture("clean-05.jpg")].map(async (file) => {
        const { capture: _capture, similarity: _similarity, ...stored } = await storeImageFile(file);
        return stored;
      }),
    );
    const titles = ["Stored before OCR", "Typed by a person", "No words", "Read before the mark", "Read in another turn"];
    await insertImageRows(s, [
      { file: stored[0]!, meta: meta(titles[0]!), at: 1_600_000_000_000 },
      { file: stored[1]!, meta: { ...meta(titles[1]!), ocrText: "A person's words" }, at: 1_600_000_000_001 },
      { file: stored[2]!, meta: meta(titles[2]!), at: 1_600_000_000_002 },
      { file: stored[3]!, meta: meta(titles[3]!), at: 1_600_000_000_003 },
      { file: stored[4]!, meta: meta(titles[4]!), at: 1_600_000_000_004 },
    ]);
    const [unread, typed, wordless, legacy, turned] = (
      await db().selectFrom("images").select("id").where("title", "in", titles).orderBy("id").execute()
    ).map((r) => r.id);
    // Machine text from before migration 029 (no mark): read in this picture. Machine text marked as read in another
    // picture (a turn whose own reading failed): read again.
    await db().updateTable("images").set({ ocr_text: "Crisp & Co", ocr_by_machine: 1 }).where("id", "=", legacy!).execute();
    await db()
      .updateTable("images")
      .set({ ocr_text: "Fresh Fields", ocr_by_machine: 1, ocr_read_key: "previews/another-turn.webp" })
      .where("id", "=", turned!)
      .execute();
    // The image each reading was for: a done job's payload is dropped, its result names it.
    const readings = async () =>
      (await ocrJobs())
        .map((j) => ((JSON.parse(j.payload) ?? JSON.parse(j.result ?? "null")) as { imageId: number } | null)?.imageId)
        .filter((i) => i !== undefined && [read, unread, typed, wordless, legacy, turned].includes(i));
    expect(await readings()).toEqual([read]);

    await queueReimport(s, "files");
    while (await runOnce(jobRegistry, "ocr-test"));
    expect(await readings()).toEqual([read, unread, wordless, turned]);
    expect((await image(turned!)).ocr_read_key).toBe((await image(turned!)).preview_key);
    expect(await image(legacy!)).toMatchObject({ ocr_text: "Crisp & Co", ocr_read_key: null });
    expect(await image(unread!)).toMatchObject({ ocr_by_machine: 1, ocr_read_key: (await image(unread!)).preview_key });
    expect((await image(unread!)).ocr_text).toContain("Urban Roast");
    expect(await image(typed!)).toMatchObject({ ocr_text: "A person's words", ocr_by_machine: 0, ocr_read_key: null });
    // Read and found nothing: still marked as read, and no version for it.
    expect(await image(wordless!)).toMatchObject({ ocr_text: "", ocr_read_key: (await image(wordless!)).preview_key, version: 1 });

    // Again: everything the machine may read has been read in its picture.
    await queueReimport(s, "files");
    while (await runOnce(jobRegistry, "ocr-test"));
    expect(await readings()).toEqual([read, unread, wordless, turned]);
  });

  it("'Read text again' is an editor's: queued once however often it is asked, for an empty or machine-read field; refused to a viewer", async () => {
    const id = await addImageFile(await scope(), picture("clean-11.jpg"), meta("Again"));
    await drain();
    const before = await image(id);
    await db().updateTable("images").set({ ocr_text: "stale reading" }).where("id", "=", id).execute();
    const queued = (await ocrJobs()).length;
    // Asked for five times before the runner takes it: one reading.
    for (let i = 0; i < 5; i++) await requestOcr(await scope(), (await ocrTarget(id))!);
    expect((await ocrJobs()).length).toBe(queued + 1);
    await drain();
    expect((await image(id)).ocr_text).toBe(before.ocr_text);
    await expect(requestOcr(await projectScope(viewer.actor, projectId), (await ocrTarget(id))!)).rejects.toBeInstanceOf(NotAllowedError);
  });

  it("with OCR=off queues no reading, refuses 'Read text again', and a reading queued before skips", async () => {
    const queuedBefore = await addImageFile(await scope(), picture("clean-12.jpg"), meta("Queued while on"));
    const jobsBefore = (await ocrJobs()).length;
    setConfig(loadConfig({ DATA_DIR: t.dataDir, KOALA_ENV: "development", DEMO_SEED: "off", LOG_LEVEL: "error", OCR: "off" }));
    try {
      const id = await addImageFile(await scope(), picture("clean-13.jpg"), meta("While off"));
      expect((await ocrJobs()).length).toBe(jobsBefore);
      await expect(requestOcr(await scope(), (await ocrTarget(id))!)).rejects.toBeInstanceOf(ConflictError);
      await drain();
      expect(await image(queuedBefore)).toMatchObject({ ocr_text: "", version: 1 });
      expect(JSON.parse((await ocrJobs()).at(-1)!.result!)).toEqual({ imageId: queuedBefore, skipped: "OCR is off." });
    } finally {
      setConfig(loadConfig({ DATA_DIR: t.dataDir, KOALA_ENV: "development", DEMO_SEED: "off", LOG_LEVEL: "error", OCR: "on" }));
    }
  });
});
