import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parse } from "csv-parse/sync";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { db } from "~/db/connection.server";
import { InvalidError, NotAllowedError, NotFoundError } from "~/lib/errors";
import { SYSTEM } from "~/models/actor";
import { createAttribute, setAttributeValues } from "~/models/attributes.server";
import { createBoard } from "~/models/boards.server";
import {
  addKeywordsBulk,
  copyToBoard,
  countSelection,
  deleteImagesBulk,
  moveToBoard,
  removeFromBoardBulk,
  selectionPage,
  selectionRanges,
  selectionRows,
} from "~/models/bulk.server";
import { insertImage, insertImageRows } from "~/models/images.server";
import { getJob } from "~/models/jobs.server";
import { boardScope, projectScope, type ProjectScope, withFilter } from "~/models/scope.server";
import { BULK_INLINE_MAX, csvOfSelection, runBulk, zipOfSelection } from "~/services/bulk.server";
import { addImageFile } from "~/services/ingest.server";
import { jobRegistry } from "~/services/job-registry.server";
import { runOnce } from "~/services/jobs.server";
import { storage } from "~/services/storage.server";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";
import { fakeFile, insertManyImages, makeProject, makeUser, meta, storedFakeFile } from "../helpers/fixtures";
import { jpeg, png } from "../helpers/images";
import { sqlitePlan } from "../helpers/plans";

const onBoard = async (boardId: string) =>
  (await db().selectFrom("board_images").select("image_id").where("board_id", "=", boardId).orderBy("image_id").execute()).map(
    (r) => r.image_id,
  );

async function readAll(stream: ReadableStream<Uint8Array>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

describe.each(dialects)("bulk actions on a selection (%s)", (dialect) => {
  let t: TestDatabase;
  let editor: Awaited<ReturnType<typeof makeUser>>;
  let viewer: Awaited<ReturnType<typeof makeUser>>;
  let projectId: number;
  let scope: ProjectScope;
  let ids: number[];
  let foreignImage: number;

  beforeAll(async () => {
    t = await freshDatabase(dialect);
    editor = await makeUser();
    viewer = await makeUser();
    const other = await makeUser();
    projectId = (await makeProject([{ actor: editor.actor }, { actor: viewer.actor, role: "viewer" }])).id;
    scope = await projectScope(editor.actor, projectId);
    ids = [];
    for (let i = 0; i < 8; i++) ids.push(await insertImage(scope, await storedFakeFile(300 + i), meta(`img ${i}`, i % 2 ? ["Promo"] : [])));
    const otherProject = (await makeProject([{ actor: other.actor }])).id;
    foreignImage = await insertImage(await projectScope(other.actor, otherProject), await storedFakeFile(399), meta("foreign"));
  });
  afterAll(() => t.drop());

  it("adds picked images to a board, skipping and counting those already there", async () => {
    const board = await createBoard(scope, { title: "Adds", imageIds: [ids[0]!] });
    const outcome = await copyToBoard(scope, { all: false, ids: [ids[0]!, ids[1]!, ids[2]!] }, board.id);
    expect(outcome).toEqual({ affected: 2, skipped: 1 });
    expect(await onBoard(board.id)).toEqual([ids[0], ids[1], ids[2]].sort((a, b) => a! - b!));
  });

  it("adds the whole set minus exceptions (select all)", async () => {
    const board = await createBoard(scope, { title: "All but two" });
    const outcome = await copyToBoard(scope, { all: true, ids: [ids[3]!, ids[4]!] }, board.id);
    expect(outcome.affected).toBe(ids.length - 2);
    expect(await onBoard(board.id)).not.toContain(ids[3]);
    expect((await onBoard(board.id)).length).toBe(ids.length - 2);
  });

  it("fails the whole request with 404 and changes nothing when one picked id is foreign or unknown", async () => {
    const board = await createBoard(scope, { title: "Guarded" });
    for (const bad of [foreignImage, 987_654])
      await expect(countSelection(scope, { all: false, ids: [ids[0]!, bad] })).rejects.toBeInstanceOf(NotFoundError);
    await expect(runBulk(scope, { all: false, ids: [ids[0]!, foreignImage] }, { op: "add", target: board.id })).rejects.toBeInstanceOf(
      NotFoundError,
    );
    expect(await onBoard(board.id)).toEqual([]);
    // A board of another project is not a target either.
    const otherBoard = (await db().selectFrom("boards").select("id").where("project_id", "!=", projectId).executeTakeFirst())?.id ?? "nope";
    await expect(copyToBoard(scope, { all: false, ids: [ids[0]!] }, otherBoard)).rejects.toBeInstanceOf(NotFoundError);
  });

  it("refuses every write to a viewer (403), while reading (download, data) works", async () => {
    const viewing = await projectScope(viewer.actor, projectId);
    const board = await createBoard(scope, { title: "Viewer attempt" });
    await expect(copyToBoard(viewing, { all: false, ids: [ids[0]!] }, board.id)).rejects.toBeInstanceOf(NotAllowedError);
    await expect(deleteImagesBulk(viewing, { all: false, ids: [ids[0]!] })).rejects.toBeInstanceOf(NotAllowedError);
    await expect(addKeywordsBulk(viewing, { all: false, ids: [ids[0]!] }, ["nope"])).rejects.toBeInstanceOf(NotAllowedError);
    await expect(csvOfSelection(viewing, { all: false, ids: [ids[0]!] })).resolves.toHaveProperty("count", 1);
  });

  it("moves images off one board onto another; two moves of the same images at once leave each on exactly one board", async () => {
    const source = await createBoard(scope, { title: "Source", imageIds: ids.slice(0, 6) });
    const a = await createBoard(scope, { title: "Target A", imageIds: [ids[0]!] });
    const b = await createBoard(scope, { title: "Target B" });
    const from = await boardScope(editor.actor, source.id);
    const first = await moveToBoard(from, { all: false, ids: [ids[0]!, ids[1]!] }, a.id);
    expect(first).toEqual({ affected: 2, skipped: 1 }); // ids[0] was on A already
    expect(await onBoard(source.id)).toEqual(ids.slice(2, 6));
    const results = await Promise.allSettled([
      moveToBoard(await boardScope(editor.actor, source.id), { all: true, ids: [] }, a.id),
      moveToBoard(await boardScope(editor.actor, source.id), { all: true, ids: [] }, b.id),
    ]);
    expect(results.every((r) => r.status === "fulfilled")).toBe(true);
    const onA = new Set(await onBoard(a.id));
    const onB = new Set(await onBoard(b.id));
    for (const id of ids.slice(2, 6)) expect(Number(onA.has(id)) + Number(onB.has(id)), `image ${id}`).toBe(1);
    expect(await onBoard(source.id)).toEqual([]);
    await expect(moveToBoard(from, { all: true, ids: [] }, source.id)).rejects.toBeInstanceOf(InvalidError);
  });

  it("removes a selection from a board, leaving the images in the project", async () => {
    const board = await createBoard(scope, { title: "Removal", imageIds: ids.slice(0, 4) });
    const outcome = await removeFromBoardBulk(await boardScope(editor.actor, board.id), { all: true, ids: [ids[0]!] });
    expect(outcome.affected).toBe(3);
    expect(await onBoard(board.id)).toEqual([ids[0]]);
    expect(await countSelection(scope, { all: false, ids: ids.slice(0, 4) })).toBe(4);
  });

  it("adds keywords to images that lack them (any case), one new version each, and skips full ones", async () => {
    const outcome = await addKeywordsBulk(scope, { all: false, ids: ids.slice(0, 4) }, ["promo", "Aisle"]);
    expect(outcome).toEqual({ affected: 4, skipped: 0 });
    const rows = await db()
      .selectFrom("images")
      .select(["id", "keywords", "version"])
      .where("id", "in", ids.slice(0, 4))
      .orderBy("id")
      .execute();
    for (const r of rows) {
      const keywords = JSON.parse(r.keywords) as string[];
      expect(keywords.filter((k) => k.toLowerCase() === "promo")).toHaveLength(1);
      expect(keywords).toContain("Aisle");
      expect(r.version).toBe(2);
    }
    const versions = await db()
      .selectFrom("image_versions")
      .select(["image_id", "changes"])
      .where("image_id", "=", ids[0]!)
      .where("version", "=", 2)
      .execute();
    expect(versions.map((v) => JSON.parse(v.changes))).toEqual([["keywords"]]);
    expect(await addKeywordsBulk(scope, { all: false, ids: ids.slice(0, 4) }, ["AISLE"])).toEqual({ affected: 0, skipped: 4 });
    // Written in the same millisecond as the action (the clock held still): still not counted as changed.
    const clock = vi.spyOn(Date, "now").mockReturnValue(Date.now());
    try {
      const full = await insertImage(
        scope,
        await storedFakeFile(350),
        meta(
          "full",
          Array.from({ length: 30 }, (_, i) => `kw${i}`),
        ),
      );
      expect(await addKeywordsBulk(scope, { all: false, ids: [full] }, ["extra"])).toEqual({ affected: 0, skipped: 1 });
    } finally {
      clock.mockRestore();
    }
  });

  it("deletes a selection: rows gone (pins with them) and one purge job queued for their objects", async () => {
    const doomed = [
      await insertImage(scope, await storedFakeFile(360), meta("doomed 1")),
      await insertImage(scope, await storedFakeFile(361), meta("doomed 2")),
    ];
    const board = await createBoard(scope, { title: "Holding doomed", imageIds: doomed });
    const before = await db().selectFrom("jobs").select("id").where("type", "=", "objects.purge-many").execute();
    expect(await deleteImagesBulk(scope, { all: false, ids: doomed })).toEqual({ affected: 2, skipped: 0 });
    expect(await db().selectFrom("images").select("id").where("id", "in", doomed).execute()).toEqual([]);
    expect(await onBoard(board.id)).toEqual([]);
    const jobs = await db().selectFrom("jobs").select(["id", "payload"]).where("type", "=", "objects.purge-many").execute();
    expect(jobs.length).toBe(before.length + 1);
    const payload = JSON.parse(jobs[jobs.length - 1]!.payload) as { items: { keys: string[] }[] };
    expect(payload.items.flatMap((i) => i.keys)).toContain(fakeFile(360).storageKey);
    expect((await boardScope(editor.actor, board.id)).board.coverImageId).toBeNull();
  });

  it("streams one ZIP of the originals plus images.csv that an independent reader reads back, byte for byte", async () => {
    const files = [await jpeg(120, 90, "#112233"), await png(60, 40), await jpeg(80, 80, "#445566")];
    const titles = ["Shelf: left/right?", "CON", "Shelf: left/right?"];
    const added: number[] = [];
    for (const [i, buf] of files.entries()) added.push(await addImageFile(scope, buf, { ...meta(titles[i]!), originalName: `f${i}.jpg` }));
    const zip = await zipOfSelection(scope, { all: false, ids: added });
    const bytes = await readAll(zip.stream);
    expect(bytes.length).toBe(zip.size);
    const dir = mkdtempSync(path.join(tmpdir(), "koala-zip-"));
    const file = path.join(dir, "out.zip");
    writeFileSync(file, bytes);
    // Python's zipfile: another implementation than the writer's.
    const listing = JSON.parse(
      execFileSync("python3", [
        "-c",
        "import json,sys,zipfile,hashlib\nz=zipfile.ZipFile(sys.argv[1])\nassert z.testzip() is None\nprint(json.dumps([[i.filename,i.compress_type,hashlib.sha256(z.read(i)).hexdigest()] for i in z.infolist()]))",
        file,
      ]).toString(),
    ) as [string, number, string][];
    const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");
    expect(listing.map(([name]) => name).sort()).toEqual(
      ["CON_.png", "Shelf left right.jpg", "Shelf left right (2).jpg", "images.csv"].sort(),
    );
    expect(listing.every(([, method]) => method === 0)).toBe(true); // stored, not deflated
    const byName = new Map(listing.map(([name, , hash]) => [name, hash]));
    const sorted = added.map((id, i) => ({ id, buf: files[i]! }));
    expect(new Set(sorted.map((s) => sha(s.buf)))).toEqual(new Set([...byName].filter(([n]) => n !== "images.csv").map(([, h]) => h)));
  });

  it("refuses a download of 101 images with the spec's message", async () => {
    const rows = Array.from({ length: 101 }, (_, i) => ({ file: fakeFile(400 + i), meta: meta(`many ${i}`), at: 1_700_000_000_000 + i }));
    const other = await makeProject([{ actor: editor.actor }]);
    const many = await projectScope(editor.actor, other.id);
    await insertImageRows(many, rows);
    await expect(zipOfSelection(many, { all: true, ids: [] })).rejects.toThrow("You can only download 100 images at a time");
  });

  it("exports images data as CSV: BOM, header, attribute columns, formula cells escaped", async () => {
    const attr = await createAttribute(await projectScope(SYSTEM, projectId), { name: "Region", code: "region", type: 3 });
    const evil = await insertImage(scope, await storedFakeFile(370), { ...meta('=HYPERLINK("http://evil")'), description: "+1+1" });
    await setAttributeValues(scope, [{ imageId: evil, attributeId: attr, value: "@SUM(A1)" }]);
    const csv = await csvOfSelection(scope, { all: false, ids: [evil] });
    const text = (await readAll(csv.stream)).toString("utf8");
    expect(text.charCodeAt(0)).toBe(0xfeff);
    const [header, row] = parse(text.slice(1)) as string[][];
    expect(header).toEqual(expect.arrayContaining(["Image ID", "Title", "Keywords", "Region"]));
    const cell = (name: string) => row![header!.indexOf(name)];
    expect(cell("Title")).toBe('\'=HYPERLINK("http://evil")');
    expect(cell("Description")).toBe("'+1+1");
    expect(cell("Region")).toBe("'@SUM(A1)");
  });

  it("walks a selection in pages from a cursor: every image once, in id order, each page sought to its cursor", async () => {
    const walked = await makeProject([{ actor: editor.actor }]);
    const walkedScope = await projectScope(editor.actor, walked.id);
    await insertManyImages(walkedScope, 250, { first: 20_000, title: (i) => `walked ${i}` });
    const seen: number[] = [];
    for (;;) {
      const page = await selectionRows(walkedScope, { all: true, ids: [] }, { afterId: seen.at(-1) ?? 0, limit: 100, columns: ["id"] });
      if (!page.length) break;
      seen.push(...page.map((r) => r.id));
    }
    const all = await db().selectFrom("images").select("id").where("project_id", "=", walked.id).orderBy("id").execute();
    expect(seen).toEqual(all.map((r) => r.id));
    // The index searched from the cursor, not from the project's first image (PostgreSQL's side, at 50,000 images
    // beside 150,000 others: tests/integration/pg-plans.test.ts).
    if (dialect === "sqlite") {
      const steps = await sqlitePlan(selectionPage(walkedScope, { all: true, ids: [] }, { afterId: seen[150]!, limit: 100 }));
      expect(steps.map((r) => r.detail)).toEqual([expect.stringMatching(/USING INDEX images_project_id \(project_id=\? AND id>\?\)/)]);
    }
  });

  it("runs select all on a large project as a background job, in chunks, with progress, set-based", { timeout: 120_000 }, async () => {
    const big = await makeProject([{ actor: editor.actor }]);
    const bigScope = await projectScope(editor.actor, big.id);
    const count = BULK_INLINE_MAX + 1500;
    await insertManyImages(bigScope, count, { first: 10_000, title: (i) => `big ${i}` });
    const fresh = await projectScope(editor.actor, big.id);
    const board = await createBoard(fresh, { title: "Everything" });
    expect((await selectionRanges(fresh, { all: true, ids: [] }, 2000)).length).toBe(Math.ceil(count / 2000));
    const run = await runBulk(fresh, { all: true, ids: [] }, { op: "add", target: board.id });
    expect(run).toHaveProperty("jobId");
    const jobId = (run as { jobId: number }).jobId;
    expect((await getJob(jobId))?.total).toBe(count);
    while (await runOnce(jobRegistry, "bulk-test"));
    const job = await getJob(jobId);
    expect(job).toMatchObject({ status: "done", progress: count, total: count });
    expect(JSON.parse(job!.result!)).toMatchObject({ affected: count, skipped: 0, action: "add" });
    expect((await onBoard(board.id)).length).toBe(count);
    expect(storage()).toBeTruthy();
  });

  it("keeps a searched grid's filter in the background job: only the images found are changed", { timeout: 120_000 }, async () => {
    const big = await makeProject([{ actor: editor.actor }]);
    const bigScope = await projectScope(editor.actor, big.id);
    const found = BULK_INLINE_MAX + 100;
    const count = found + 100;
    await insertManyImages(bigScope, count, { first: 30_000, title: (i) => `${i < found ? "wanted" : "other"} ${i}` });
    const searched = withFilter(await projectScope(editor.actor, big.id), new URLSearchParams({ q: "wanted" }));
    const board = await createBoard(searched, { title: "Found" });
    const run = await runBulk(searched, { all: true, ids: [] }, { op: "add", target: board.id });
    const jobId = (run as { jobId: number }).jobId;
    expect(jobId).toBeGreaterThan(0);
    while (await runOnce(jobRegistry, "bulk-test"));
    const job = await getJob(jobId);
    expect(JSON.parse(job!.result!)).toMatchObject({ affected: found, skipped: 0, action: "add", back: `/client/${big.id}?q=wanted` });
    expect((await onBoard(board.id)).length).toBe(found);
  });
});
