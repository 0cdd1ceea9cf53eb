import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { sql } from "kysely";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { loadConfig, setConfig } from "~/config.server";
import { db, dialect as currentDialect } from "~/db/connection.server";
import { sha256 } from "~/lib/crypto.server";
import { ConflictError, NotAllowedError } from "~/lib/errors";
import { createAttribute } from "~/models/attributes.server";
import * as jobsModel from "~/models/jobs.server";
import { decodeCursor, gridPage } from "~/models/grid.server";
import { editProject } from "~/models/projects.server";
import * as reimportModel from "~/models/reimport.server";
import { queueReimport, REIMPORT_RUNNING } from "~/models/reimport.server";
import { projectScope, withFilter } from "~/models/scope.server";
import { addImageFile } from "~/services/ingest.server";
import { jobRegistry } from "~/services/job-registry.server";
import { runOnce } from "~/services/jobs.server";
import type { ReimportReport } from "~/services/reimport.server";
import { reimportSettings, startReimport, wscBudget } from "~/services/reimport.server";
import { storage } from "~/services/storage.server";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";
import { makeProject, makeUser } from "../helpers/fixtures";
import { jpeg, photo, png } from "../helpers/images";

/**
 * Re-import (spec 2's tile): a normal project's images derived again from their originals, and a WSC project's
 * manifest read from a real local HTTP server — good images, a duplicate by checksum, and a hostile manifest's
 * entries (SVG, an image over the size limit, private, link-local and loopback-by-name addresses, other schemes).
 */
const MAX_IMAGE_BYTES = 200 * 1024;

describe.each(dialects)("re-import (%s)", (dialect) => {
  let t: TestDatabase;
  let web: Server;
  let base: string;
  const files = new Map<string, { type: string; body: Buffer | string }>();
  /** The paths the source was asked for, in order. */
  const hits: string[] = [];
  let manager: Awaited<ReturnType<typeof makeUser>>;
  let editor: Awaited<ReturnType<typeof makeUser>>;
  let viewer: Awaited<ReturnType<typeof makeUser>>;
  let projectId: number;
  const scope = () => projectScope(manager.actor, projectId);

  beforeAll(async () => {
    web = createServer((req, res) => {
      const path = new URL(req.url ?? "/", "http://x").pathname;
      hits.push(path);
      if (path === "/moved.jpg") {
        res.writeHead(302, { Location: `http://localhost:${(web.address() as AddressInfo).port}/red.jpg` }).end();
        return;
      }
      const file = files.get(path);
      if (!file) {
        res.writeHead(404).end("not found");
        return;
      }
      res.writeHead(200, { "Content-Type": file.type }).end(file.body);
    });
    await new Promise<void>((resolve) => web.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(web.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => web.close(() => resolve())));

  beforeEach(async () => {
    t = await freshDatabase(dialect, { MAX_IMAGE_BYTES: String(MAX_IMAGE_BYTES), WSC_ALLOWED_PRIVATE_HOSTS: "127.0.0.1" });
    manager = await makeUser();
    editor = await makeUser();
    viewer = await makeUser();
    const project = await makeProject([
      { actor: manager.actor, role: "manager" },
      { actor: editor.actor, role: "editor" },
      { actor: viewer.actor, role: "viewer" },
    ]);
    projectId = project.id;
    files.clear();
  });
  afterEach(async () => {
    await t.drop();
  });

  const runJobs = async () => {
    while (await runOnce(jobRegistry, "reimport-test"));
  };
  const reportOf = async (jobId: number) => {
    const job = await db().selectFrom("jobs").select(["status", "result", "last_error"]).where("id", "=", jobId).executeTakeFirstOrThrow();
    expect(job.status, job.last_error ?? "").toBe("done");
    return (JSON.parse(job.result!) as { reimport: ReimportReport }).reimport;
  };
  const asWsc = async (manifestPath: string) => {
    await editProject(await scope(), `WSC ${projectId}`, {
      wsc: true,
      source: `${base}${manifestPath}?token=s3cret-token`,
      keepGps: false,
    });
  };
  const images = () =>
    db()
      .selectFrom("images")
      .select(["id", "title", "keywords", "checksum", "original_name"])
      .where("project_id", "=", projectId)
      .orderBy("id")
      .execute();
  const valuesOf = async (imageId: number) =>
    (
      await db()
        .selectFrom("image_attribute_values as v")
        .innerJoin("attributes as a", "a.id", "v.attribute_id")
        .select(["a.name", "a.type", "v.value"])
        .where("v.image_id", "=", imageId)
        .orderBy("a.name")
        .execute()
    ).map((r) => `${r.name}(${r.type})=${r.value}`);

  it("imports a WSC manifest from the source: images through the upload checks, duplicates by checksum, WSC attributes created; hostile entries refused one by one", async () => {
    const red = await jpeg(80, 60, "#cc2222");
    const blue = await png(40, 30);
    files.set("/red.jpg", { type: "image/jpeg", body: red });
    files.set("/blue.png", { type: "image/png", body: blue });
    files.set("/red-again.jpg", { type: "image/jpeg", body: red });
    files.set("/logo.svg", { type: "image/svg+xml", body: '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>' });
    files.set("/huge.jpg", { type: "image/jpeg", body: Buffer.alloc(MAX_IMAGE_BYTES + 1, 0xff) });
    // A user attribute of a name the manifest also uses: the source may not overwrite it.
    await createAttribute(await scope(), { name: "Shelf", type: 3 });
    files.set("/manifest.json", {
      type: "application/json",
      body: JSON.stringify({
        images: [
          { url: `${base}/red.jpg`, title: "Red can", keywords: ["cola", "can"], attributes: { Retailer: "Tesco", Shelf: "Top" } },
          { url: `${base}/blue.png`, title: "Blue box", keywords: "box, cereal", attributes: { Retailer: "Asda", "Pack size": "500g" } },
          { url: `${base}/red-again.jpg`, title: "Red can (again)", attributes: { Retailer: "Lidl" } },
          { url: `${base}/logo.svg`, title: "Logo" },
          { url: `${base}/huge.jpg`, title: "Huge" },
          { url: "http://10.0.0.1/x.jpg" },
          { url: "http://169.254.169.254/latest/meta-data/" },
          { url: `http://localhost:${(web.address() as AddressInfo).port}/red.jpg` },
          { url: `${base}/moved.jpg` },
          { url: "file:///etc/passwd" },
          { url: `${base}/missing.jpg?sig=s3cret-entry` },
          { url: `${base}/blue.png`, attributes: { Colour: "Blue", colour: "Navy" } },
          { title: "No address" },
        ],
      }),
    });
    await asWsc("/manifest.json");
    const jobId = await startReimport(await scope());
    await runJobs();
    const report = await reportOf(jobId);
    expect(report.kind).toBe("wsc");
    expect(report.added).toBe(2);
    expect(report.updated).toBe(1);
    expect(report.refused).toBe(10);
    const problems = report.problems.map((p) => `${p.where}: ${p.message}`);
    expect(problems.sort()).toEqual(
      [
        `Entry 4 (${base}/logo.svg): The file is not a supported image (JPEG, PNG, WebP, GIF, TIFF, AVIF or HEIF).`,
        `Entry 5 (${base}/huge.jpg): Refused: the file is larger than 200 KB`,
        "Entry 6 (http://10.0.0.1/x.jpg): Refused: 10.0.0.1 is a private address",
        "Entry 7 (http://169.254.169.254/latest/meta-data/): Refused: 169.254.169.254 is a private address",
        `Entry 8 (${base.replace("127.0.0.1", "localhost")}/red.jpg): Refused: localhost is a private address`,
        // A redirect from the allowed host to a private one is checked again, and refused.
        `Entry 9 (${base}/moved.jpg): Refused: localhost is a private address`,
        "Entry 10: Only http and https addresses are allowed.",
        `Entry 11 (${base}/missing.jpg): Refused: the server answered 404`,
        'Entry 12: Attribute "colour" is given twice.',
        "Entry 13: No image URL.",
        "Attribute Shelf: A project attribute of this name is not a WSC attribute; its values were left out.",
      ].sort(),
    );
    const rows = await images();
    expect(rows.map((r) => [r.title, JSON.parse(r.keywords), r.original_name])).toEqual([
      // The duplicate came after: the same file took its title; its keywords, not given, stayed.
      ["Red can (again)", ["cola", "can"], "red.jpg"],
      ["Blue box", ["box", "cereal"], "blue.png"],
    ]);
    expect(rows[0]!.checksum).toBe(sha256(red));
    expect(await valuesOf(rows[0]!.id)).toEqual(["Retailer(1)=Lidl"]);
    expect(await valuesOf(rows[1]!.id)).toEqual(["Pack_size(1)=500g", "Retailer(1)=Asda"]);
    // Stored like an upload: original and derivatives.
    const stored = await db()
      .selectFrom("images")
      .select(["storage_key", "thumb_key"])
      .where("id", "=", rows[1]!.id)
      .executeTakeFirstOrThrow();
    expect(await storage().size(stored.storage_key)).toBe(blue.length);
    expect(await storage().size(stored.thumb_key)).toBeGreaterThan(0);
    // Nothing in the report carries a query string, the source's or an entry's (tokens live there).
    expect(JSON.stringify(report)).not.toContain("s3cret");

    // A second run finds every image by its checksum: nothing added, the duplicate's title goes back and forth.
    const again = await reportOf(await startReimport(await scope()).then(async (id) => (await runJobs(), id)));
    expect(again.added).toBe(0);
    expect(again.updated + again.unchanged).toBe(3);
    expect((await images()).length).toBe(2);
  });

  it("finds a WSC source's located photos again in a project that keeps no positions, whether stored with their position or without", async () => {
    const before = await photo({ make: "Before", gps: { lat: 51.5, lon: -0.12 } });
    const fresh = await photo({ make: "Fresh", gps: { lat: 48.85, lon: 2.35 } });
    files.set("/before.jpg", { type: "image/jpeg", body: before });
    files.set("/fresh.jpg", { type: "image/jpeg", body: fresh });
    files.set("/manifest.json", {
      type: "application/json",
      body: JSON.stringify({
        images: [
          { url: `${base}/before.jpg`, title: "Before" },
          { url: `${base}/fresh.jpg`, title: "Fresh" },
        ],
      }),
    });
    // Stored as sent while the project kept positions; then the WSC settings, which keep none.
    await editProject(await scope(), "Kept", { wsc: false, source: "", keepGps: true });
    await addImageFile(await scope(), before, { title: "Before", description: "", keywords: [], ocrText: "", originalName: "before.jpg" });
    await asWsc("/manifest.json");
    const run = async () => reportOf(await startReimport(await scope()).then(async (id) => (await runJobs(), id)));
    expect(await run()).toMatchObject({ added: 1, refused: 0 });
    expect(await run()).toMatchObject({ added: 0, refused: 0 });
    const rows = await images();
    expect(rows.map((r) => r.title)).toEqual(["Before", "Fresh"]);
    expect(rows.map((r) => r.checksum)).toEqual([sha256(before), sha256(fresh)]);
  });

  it("resumes a WSC re-import that stopped part-way after the last entry recorded: those before are not fetched again", async () => {
    for (const [name, colour] of [
      ["a", "#aa0000"],
      ["b", "#00aa00"],
      ["c", "#0000aa"],
    ] as const)
      files.set(`/${name}.jpg`, { type: "image/jpeg", body: await jpeg(30, 30, colour) });
    files.set("/three.json", { type: "application/json", body: JSON.stringify(["a", "b", "c"].map((n) => ({ url: `${base}/${n}.jpg` }))) });
    await asWsc("/three.json");
    const real = jobsModel.saveJobCheckpoint;
    let saves = 0;
    const save = vi.spyOn(jobsModel, "saveJobCheckpoint").mockImplementation(async (...args) => {
      // The worker stops (the database gone) as it records the second entry: that entry's image is stored already.
      if (++saves === 2) throw new Error("Connection terminated unexpectedly");
      return real(...args);
    });
    try {
      hits.length = 0;
      const jobId = await startReimport(await scope());
      await runOnce(jobRegistry, "reimport-test");
      const stopped = await db().selectFrom("jobs").selectAll().where("id", "=", jobId).executeTakeFirstOrThrow();
      expect(stopped).toMatchObject({ status: "queued", attempts: 1 });
      expect(JSON.parse(stopped.checkpoint!)).toMatchObject({ done: 1, report: { kind: "wsc", added: 1 } });
      expect(hits).toEqual(["/three.json", "/a.jpg", "/b.jpg"]);
      await db().updateTable("jobs").set({ run_at: 0 }).where("id", "=", jobId).execute(); // its backoff over
      await runJobs();
      // The manifest again (it may have changed), then the entry in flight (found by checksum) and the last.
      expect(hits).toEqual(["/three.json", "/a.jpg", "/b.jpg", "/three.json", "/b.jpg", "/c.jpg"]);
      expect(await reportOf(jobId)).toMatchObject({ kind: "wsc", added: 2, unchanged: 1, refused: 0 });
      expect((await images()).map((i) => i.original_name)).toEqual(["a.jpg", "b.jpg", "c.jpg"]);
    } finally {
      save.mockRestore();
    }
  });

  it("stops a WSC re-import at its time limit and says how many entries it did not reach", async () => {
    files.set("/a.jpg", { type: "image/jpeg", body: await jpeg(30, 30, "#00aa00") });
    files.set("/two.json", { type: "application/json", body: JSON.stringify([{ url: `${base}/a.jpg` }, { url: `${base}/a.jpg?2` }]) });
    await asWsc("/two.json");
    const saved = wscBudget.ms;
    wscBudget.ms = -1;
    try {
      const report = await reportOf(await startReimport(await scope()).then(async (id) => (await runJobs(), id)));
      expect(report).toMatchObject({ added: 0, refused: 0 });
      expect(report.problems[0]).toEqual({
        where: "Time limit",
        message:
          "Stopped after 0 minutes with 2 entries not reached; run Re-import again to go on (images already taken are found by checksum).",
      });
    } finally {
      wscBudget.ms = saved;
    }
  });

  it("reads a CSV manifest: url, title and keywords columns, every other column a WSC attribute", async () => {
    files.set("/a.jpg", { type: "image/jpeg", body: await jpeg(30, 30, "#00aa00") });
    files.set("/list.csv", { type: "text/csv", body: `URL,Title,Keywords,Store format\n${base}/a.jpg,Green pack,"green, pack",Express\n` });
    await asWsc("/list.csv");
    const report = await reportOf(await startReimport(await scope()).then(async (id) => (await runJobs(), id)));
    expect(report).toMatchObject({ added: 1, refused: 0 });
    const [row] = await images();
    expect([row!.title, JSON.parse(row!.keywords)]).toEqual(["Green pack", ["green", "pack"]]);
    expect(await valuesOf(row!.id)).toEqual(["Store_format(1)=Express"]);
  });

  it("refuses a source on a private address that is not configured, and says so in the job's report", async () => {
    setConfig(loadConfig({ DATA_DIR: t.dataDir, KOALA_ENV: "development", DEMO_SEED: "off", LOG_LEVEL: "error" }));
    files.set("/manifest.json", { type: "application/json", body: "[]" });
    await asWsc("/manifest.json");
    const report = await reportOf(await startReimport(await scope()).then(async (id) => (await runJobs(), id)));
    expect(report.failure).toBe("The WSC source could not be read. Refused: 127.0.0.1 is a private address");
    expect(await images()).toEqual([]);
  });

  it("answers a manifest that is not JSON or has no url column with the reason, adding nothing", async () => {
    files.set("/broken.json", { type: "application/json", body: '{"images": [' });
    await asWsc("/broken.json");
    const report = await reportOf(await startReimport(await scope()).then(async (id) => (await runJobs(), id)));
    expect(report.failure).toBe("The WSC source could not be read. The manifest is not valid JSON.");
    files.set("/nourl.csv", { type: "text/csv", body: "address,title\nhttp://x/y.jpg,Y\n" });
    await asWsc("/nourl.csv");
    const csv = await reportOf(await startReimport(await scope()).then(async (id) => (await runJobs(), id)));
    expect(csv.failure).toBe("The WSC source could not be read. The manifest's first row names no url column.");
    expect(await images()).toEqual([]);
  });

  it("makes a normal project's derivatives again from the originals, corrects wrong file facts and rebuilds the search index", async () => {
    const s = await scope();
    const ids: number[] = [];
    for (let i = 0; i < 3; i++)
      ids.push(
        await addImageFile(s, await jpeg(60 + i, 40, "#123456"), {
          title: `Aisle ${i} zebra`,
          description: "",
          keywords: [],
          ocrText: "",
          originalName: `a${i}.jpg`,
        }),
      );
    const [first] = await db().selectFrom("images").select(["thumb_key", "preview_key"]).where("id", "=", ids[0]!).execute();
    await storage().delete(first!.thumb_key);
    await storage().delete(first!.preview_key);
    await db().updateTable("images").set({ width: 1, height: 1 }).where("id", "=", ids[1]!).execute();
    if (currentDialect() === "postgres") await sql`delete from image_search where image_id = ${ids[2]!}`.execute(db());
    const jobId = await startReimport(s);
    await runJobs();
    const report = await reportOf(jobId);
    expect(report).toMatchObject({ kind: "files", updated: 1, unchanged: 2, refused: 0 });
    expect(await storage().size(first!.thumb_key)).toBeGreaterThan(0);
    expect(await storage().size(first!.preview_key)).toBeGreaterThan(0);
    const fixed = await db().selectFrom("images").select(["width", "height"]).where("id", "=", ids[1]!).executeTakeFirstOrThrow();
    expect(fixed).toEqual({ width: 61, height: 40 });
    // Every image is found by its words again (on PostgreSQL one had lost its index row).
    const found = await gridPage(withFilter(s, new URLSearchParams({ q: "zebra" })), { after: decodeCursor(null), limit: 10 });
    expect(found.cards.map((c) => c.id).sort()).toEqual([...ids].sort());
    const job = await db().selectFrom("jobs").select(["progress", "total"]).where("id", "=", jobId).executeTakeFirstOrThrow();
    expect(job).toEqual({ progress: 3, total: 3 });
  });

  it("resumes a re-import after an attempt that stopped part-way, from the page after the last one done", async () => {
    const s = await scope();
    const ids: number[] = [];
    for (let i = 0; i < 3; i++)
      ids.push(
        await addImageFile(s, await jpeg(30 + i, 30, "#345678"), {
          title: `R${i}`,
          description: "",
          keywords: [],
          ocrText: "",
          originalName: `r${i}.jpg`,
        }),
      );
    const page = reimportSettings.page;
    reimportSettings.page = 1;
    const real = reimportModel.imagesToRefresh;
    const walked: number[] = [];
    let failed = false;
    const walk = vi.spyOn(reimportModel, "imagesToRefresh").mockImplementation(async (scope, afterId, limit) => {
      if (afterId === ids[0] && !failed) {
        failed = true;
        throw new Error("Connection terminated unexpectedly");
      }
      walked.push(afterId);
      return real(scope, afterId, limit);
    });
    try {
      const jobId = await startReimport(s);
      await runOnce(jobRegistry, "reimport-test");
      const stopped = await db().selectFrom("jobs").selectAll().where("id", "=", jobId).executeTakeFirstOrThrow();
      expect(stopped).toMatchObject({ status: "queued", attempts: 1, max_attempts: 3 });
      expect(JSON.parse(stopped.checkpoint!)).toMatchObject({ done: 1, after: ids[0], report: { kind: "files", unchanged: 1 } });
      await db().updateTable("jobs").set({ run_at: 0 }).where("id", "=", jobId).execute(); // its backoff over
      await runJobs();
      // The second attempt began after the first image: each one derived again once.
      expect(walked).toEqual([0, ids[0], ids[1], ids[2]]);
      expect(await reportOf(jobId)).toMatchObject({ kind: "files", unchanged: 3, updated: 0, refused: 0 });
    } finally {
      walk.mockRestore();
      reimportSettings.page = page;
    }
  });

  it("reports an image whose original is gone and goes on with the others", async () => {
    const s = await scope();
    const a = await addImageFile(s, await jpeg(20, 20, "#aa0000"), {
      title: "A",
      description: "",
      keywords: [],
      ocrText: "",
      originalName: "a.jpg",
    });
    await addImageFile(s, await jpeg(21, 20, "#00aa00"), { title: "B", description: "", keywords: [], ocrText: "", originalName: "b.jpg" });
    const row = await db().selectFrom("images").select("storage_key").where("id", "=", a).executeTakeFirstOrThrow();
    await storage().delete(row.storage_key);
    const report = await reportOf(await startReimport(s).then(async (id) => (await runJobs(), id)));
    expect(report).toMatchObject({
      refused: 1,
      unchanged: 1,
      problems: [{ where: `Image ${a}`, message: "The original file is missing from storage." }],
    });
  });

  it("queues one re-import per project at a time, for managers only (editors and viewers get a 403)", async () => {
    const s = await scope();
    await queueReimport(s, "files");
    await expect(queueReimport(s, "files")).rejects.toThrow(new ConflictError(REIMPORT_RUNNING));
    await runJobs();
    await expect(queueReimport(s, "files")).resolves.toBeGreaterThan(0);
    await expect(queueReimport(await projectScope(editor.actor, projectId), "files")).rejects.toBeInstanceOf(NotAllowedError);
    await expect(queueReimport(await projectScope(viewer.actor, projectId), "files")).rejects.toBeInstanceOf(NotAllowedError);
    const count = await db()
      .selectFrom("jobs")
      .select((eb) => eb.fn.countAll().as("n"))
      .where("type", "=", "project.reimport")
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(2);
  });
});
