import { execFileSync } from "node:child_process";
import exifr from "exifr";
import { parse } from "csv-parse/sync";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "~/db/connection.server";
import { createToken } from "~/models/api-tokens.server";
import { decodeCursor, gridPage, gridTotal, selectedImageIds, walkSettings, type GridScope } from "~/models/grid.server";
import { insertImageRows } from "~/models/images.server";
import { createAttribute, setAttributeValues } from "~/models/attributes.server";
import { attributeFacets } from "~/models/facets.server";
import { editProject } from "~/models/projects.server";
import { createBoard } from "~/models/boards.server";
import { resolveSharedUrl } from "~/models/share-access.server";
import { createShareLinks } from "~/models/share-links.server";
import { boardScope, projectScope, withFilter } from "~/models/scope.server";
import { csvOfSelection, zipOfSelection } from "~/services/bulk.server";
import { addImageFile, saveImageEdit } from "~/services/ingest.server";
import { jobRegistry } from "~/services/job-registry.server";
import { runOnce } from "~/services/jobs.server";
import { positionRemoval } from "~/services/position-removal.server";
import { queuePositionRemoval } from "~/models/image-positions.server";
import { holdsPosition } from "~/services/positions.server";
import { readCapture } from "~/services/capture.server";
import { readObject, storage } from "~/services/storage.server";
import { sha256 } from "~/lib/crypto.server";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";
import { fakeFile, makeProject, makeUser, meta } from "../helpers/fixtures";
import { exifBlockOf, photo, png, rawExifProfile, withPngChunks } from "../helpers/images";
import { apiChecker, type ApiChecker } from "../helpers/openapi";
import { startAppServer, type RunningServer } from "../helpers/server";

/**
 * What a photo's EXIF says, read on ingest: the capture time, the camera, the orientation (stored upright) and the
 * position, kept only where the project's manager allows it; the grid and the API sorted and narrowed by the capture
 * date, with keyset pages; over real HTTP, the API's answers checked against its OpenAPI document.
 */
const at = (y: number, mo: number, d: number, h = 12) => Date.UTC(y, mo - 1, d, h) / 1000;
const row = (id: number) => db().selectFrom("images").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
const LONDON = { lat: 51.507333, lon: -0.127667 };

describe.each(dialects)("capture data from EXIF (%s)", (dialect) => {
  let t: TestDatabase;
  let manager: Awaited<ReturnType<typeof makeUser>>;
  let projectId: number;
  const scope = () => projectScope(manager.actor, projectId);
  const settings = async (keepGps: boolean) =>
    editProject(await scope(), (await scope()).project.name, { wsc: false, source: "", keepGps });

  beforeAll(async () => {
    t = await freshDatabase(dialect);
    manager = await makeUser();
    projectId = (await makeProject([{ actor: manager.actor, role: "manager" }])).id;
  });
  afterAll(async () => {
    await t.drop();
  });

  it("reads the capture time, the camera and the upright size on upload, and keeps no position by default", async () => {
    const buf = await photo({ taken: "2024:05:17 14:03:09", make: "Canon", model: "Canon EOS R6", gps: LONDON, orientation: 6 });
    const image = await row(await addImageFile(await scope(), buf, meta("Shelf")));
    expect(image).toMatchObject({
      taken_at: Date.UTC(2024, 4, 17, 14, 3, 9) / 1000,
      camera_make: "Canon",
      camera_model: "Canon EOS R6",
      gps_lat: null,
      gps_lon: null,
      // Taken on its side (orientation 6): 64 × 48 in the file, 48 × 64 as shown.
      width: 48,
      height: 64,
    });
    expect((await scope()).project.keepGps).toBe(false);
  });

  it("keeps positions where the manager allows it, and forgets every one of them when it is turned off again", async () => {
    await settings(true);
    const kept = await addImageFile(await scope(), await photo({ taken: "2023:01:02 03:04:05", gps: LONDON }), meta("Kept"));
    expect(await row(kept)).toMatchObject({ gps_lat: LONDON.lat, gps_lon: LONDON.lon });
    const south = await addImageFile(await scope(), await photo({ gps: { lat: -33.856784, lon: 151.215297 } }), meta("Sydney"));
    expect(await row(south)).toMatchObject({ gps_lat: -33.856784, gps_lon: 151.215297 });
    await settings(false);
    const left = await db()
      .selectFrom("images")
      .select("id")
      .where("project_id", "=", projectId)
      .where("gps_lat", "is not", null)
      .execute();
    expect(left).toEqual([]);
    expect(await row(kept)).toMatchObject({ gps_lat: null, gps_lon: null, taken_at: Date.UTC(2023, 0, 2, 3, 4, 5) / 1000 });
    const audit = await db()
      .selectFrom("audit_log")
      .select("detail")
      .where("action", "=", "project.edited")
      .where("subject", "=", `project:${projectId}`)
      .orderBy("id", "desc")
      .executeTakeFirstOrThrow();
    expect(JSON.parse(String(audit.detail))).toMatchObject({ keepGps: false });
    // Off again: a new photo's position is not stored.
    const after = await addImageFile(await scope(), await photo({ gps: LONDON, make: "x" }), meta("After"));
    expect(await row(after)).toMatchObject({ gps_lat: null, gps_lon: null });
  });

  it("stores an original without its position unless the project keeps positions, also for an upload that meets the setting turned off", async () => {
    const own = (await makeProject([{ actor: manager.actor, role: "manager" }])).id;
    const s = () => projectScope(manager.actor, own);
    const stored = async (id: number) => (await readObject(storage(), (await row(id)).storage_key, Number.MAX_SAFE_INTEGER))!.bytes;

    const sent = await photo({ taken: "2024:05:17 14:03:09", make: "Canon", gps: LONDON });
    expect(holdsPosition(sent)).toBe(true);
    const first = await addImageFile(await s(), sent, meta("Off"));
    const kept = await stored(first);
    expect(kept.length).toBe(sent.length);
    expect(holdsPosition(kept)).toBe(false);
    expect(await exifr.parse(kept)).toMatchObject({ Make: "Canon", DateTimeOriginal: expect.any(Date) });
    expect((await exifr.parse(kept)).latitude).toBeUndefined();
    // The checksum stays the file's as sent (exact duplicates are found whatever a project keeps); the key says "less
    // its position", and the same file sent again is stored as the same object.
    expect(await row(first)).toMatchObject({ checksum: sha256(sent), storage_key: expect.stringMatching(/-nogps\.jpg$/) });
    expect((await row(await addImageFile(await s(), sent, meta("Again")))).storage_key).toBe((await row(first)).storage_key);

    await editProject(await s(), "Keeps positions", { wsc: false, source: "", keepGps: true });
    const located = await photo({ gps: LONDON, make: "On" });
    const on = await addImageFile(await s(), located, meta("On"));
    expect((await stored(on)).equals(located)).toBe(true);
    expect(await row(on)).toMatchObject({
      gps_lat: LONDON.lat,
      checksum: sha256(located),
      storage_key: expect.stringMatching(/[0-9a-f]\.jpg$/),
    });

    // A scope read while positions were kept, used after the manager turned them off: stored again, without.
    const stale = await s();
    await editProject(await s(), "Keeps none", { wsc: false, source: "", keepGps: false });
    const late = await addImageFile(stale, await photo({ gps: LONDON, make: "Late" }), meta("Late"));
    expect(await row(late)).toMatchObject({ gps_lat: null, camera_make: "Late" });
    expect(holdsPosition(await stored(late))).toBe(false);
  });

  it("stores a PNG without the position ImageMagick wrote into it as hexadecimal text, which no reader's check sees", async () => {
    const own = (await makeProject([{ actor: manager.actor, role: "manager" }])).id;
    const profile = rawExifProfile(exifBlockOf(await photo({ make: "Canon", gps: LONDON })), "zTXt");
    const sent = withPngChunks(await png(), profile);
    expect((await readCapture(sent)).gps).toBeNull(); // exifr reads no raw profile: only the edit can find it
    const id = await addImageFile(await projectScope(manager.actor, own), sent, meta("Converted"));
    const kept = (await readObject(storage(), (await row(id)).storage_key, Number.MAX_SAFE_INTEGER))!.bytes;
    expect(kept.length).toBe(sent.length - profile.length);
    expect(kept.includes(profile)).toBe(false);
    expect(holdsPosition(kept)).toBe(false);
    expect(await row(id)).toMatchObject({ checksum: sha256(sent), storage_key: expect.stringMatching(/-nogps\.png$/) });
  });

  it("refuses a photo whose position exifr reads but the edit cannot reach (a TIFF header it does not know), storing nothing", async () => {
    const own = (await makeProject([{ actor: manager.actor, role: "manager" }])).id;
    const odd = Buffer.from(await photo({ make: "Odd", gps: LONDON }));
    // Its TIFF header's magic number says 43 (BigTIFF's) where 42 belongs: exifr reads on, the edit does not.
    const t = odd.indexOf("Exif\0\0", 0, "latin1") + 6;
    if (odd[t] === 0x49) odd.writeUInt16LE(43, t + 2);
    else odd.writeUInt16BE(43, t + 2);
    expect(holdsPosition(odd)).toBe(false);
    expect((await readCapture(odd)).gps).toEqual(LONDON);
    const objectsBefore = await db().selectFrom("objects").select("key").execute();
    await expect(addImageFile(await projectScope(manager.actor, own), odd, meta("Odd"))).rejects.toMatchObject({
      status: 422,
      message: expect.stringContaining("Remove the position from the file"),
    });
    expect(await db().selectFrom("images").select("id").where("project_id", "=", own).execute()).toEqual([]);
    expect(await db().selectFrom("objects").select("key").execute()).toEqual(objectsBefore);
  });

  it("takes positions out of the originals already stored once they are turned off: in pages, versions too, a file another project keeps left there", async () => {
    const own = (await makeProject([{ actor: manager.actor, role: "manager" }])).id;
    const other = (await makeProject([{ actor: manager.actor, role: "manager" }])).id;
    const s = () => projectScope(manager.actor, own);
    const o = () => projectScope(manager.actor, other);
    await editProject(await s(), "Turned off later", { wsc: false, source: "", keepGps: true });
    await editProject(await o(), "Keeps its positions", { wsc: false, source: "", keepGps: true });
    const stored = async (key: string) => (await readObject(storage(), key, Number.MAX_SAFE_INTEGER))?.bytes ?? null;

    const turned = await addImageFile(await s(), await photo({ make: "Turned", gps: LONDON }), meta("Turned"));
    const image = await row(turned);
    const edit = { title: "Turned", description: "", keywords: [], ocrText: "" };
    await saveImageEdit(await s(), image, edit, 90);
    const sharedFile = await photo({ make: "Shared", gps: LONDON });
    const shared = await addImageFile(await s(), sharedFile, meta("Shared"));
    const elsewhere = await addImageFile(await o(), sharedFile, meta("Shared elsewhere"));
    const plain = await addImageFile(await s(), await png(), meta("No position"));
    const keysBefore = { turned: image.storage_key, shared: (await row(shared)).storage_key, plain: (await row(plain)).storage_key };
    // A board holding the image: its pages show the original's key, so its version must move on with the swap.
    const board = (await createBoard(await s(), { title: "Holds the turned one", imageIds: [turned] })).id;
    const boardVersion = async () =>
      (await db().selectFrom("boards").select("updated_at").where("id", "=", board).executeTakeFirstOrThrow()).updated_at;
    const boardBefore = await boardVersion();
    expect(holdsPosition((await stored(keysBefore.turned))!)).toBe(true);

    positionRemoval.page = 2;
    try {
      await editProject(await s(), "Turned off later", { wsc: false, source: "", keepGps: false });
      while (await runOnce(jobRegistry, "positions-test"));
    } finally {
      positionRemoval.page = 100;
    }

    const after = await row(turned);
    expect(after.storage_key).toBe(keysBefore.turned.replace(/\.jpg$/, "-nogps.jpg"));
    expect(await boardVersion()).toBeGreaterThan(boardBefore);
    expect(after.checksum).toBe(image.checksum);
    const versions = await db().selectFrom("image_versions").select(["version", "storage_key"]).where("image_id", "=", turned).execute();
    expect(versions.map((v) => v.version)).toEqual([1, 2]);
    expect(versions.every((v) => v.storage_key === after.storage_key)).toBe(true);
    const bytes = (await stored(after.storage_key))!;
    expect(holdsPosition(bytes)).toBe(false);
    expect(await exifr.parse(bytes)).toMatchObject({ Make: "Turned" });
    // Nothing refers to the old object any more: it stays a while for downloads that read its key before, then goes.
    expect(await storage().size(keysBefore.turned)).toBeGreaterThan(0);
    await db().updateTable("jobs").set({ run_at: 0 }).where("status", "=", "queued").execute();
    while (await runOnce(jobRegistry, "positions-test"));
    expect(await storage().size(keysBefore.turned)).toBeNull();

    // The shared file: this project's image has the copy without; the other project's keeps the file, position and all.
    expect(holdsPosition((await stored((await row(shared)).storage_key))!)).toBe(false);
    expect((await row(elsewhere)).storage_key).toBe(keysBefore.shared);
    expect((await stored(keysBefore.shared))!.equals(sharedFile)).toBe(true);
    // A file without a position keeps its key.
    expect((await row(plain)).storage_key).toBe(keysBefore.plain);

    // Queued for a project that keeps positions again (a manager turned them back on): the job changes nothing.
    await editProject(await o(), "Keeps its positions", { wsc: false, source: "", keepGps: true });
    await queuePositionRemoval(other);
    while (await runOnce(jobRegistry, "positions-test"));
    expect((await row(elsewhere)).storage_key).toBe(keysBefore.shared);
  });

  it("takes twelve photos with positions uploaded at once (no deadlock on the project's row), and keeps none where none are kept", async () => {
    const burst = (await makeProject([{ actor: manager.actor, role: "editor" }])).id;
    const s = await projectScope(manager.actor, burst);
    const files = await Promise.all(
      Array.from({ length: 12 }, (_, i) => photo({ gps: { lat: 10 + i, lon: 20 + i }, make: `Cam ${i}` }, 64 + i, 48)),
    );
    const results = await Promise.allSettled(files.map((buf, i) => addImageFile(s, buf, meta(`Burst ${i}`))));
    expect(results.filter((r) => r.status === "rejected").map((r) => String((r as PromiseRejectedResult).reason))).toEqual([]);
    const rows = await db().selectFrom("images").select(["gps_lat", "camera_make"]).where("project_id", "=", burst).execute();
    expect(rows).toHaveLength(12);
    expect(rows.every((r) => r.gps_lat === null)).toBe(true);
  });

  it("changes the setting only when the person changed the box: a form from before a change leaves it (and the positions) alone", async () => {
    await settings(true);
    const id = await addImageFile(await scope(), await photo({ gps: LONDON, make: "Stale" }), meta("Stale form"));
    // A form opened before the setting was turned on posts it unchanged: `keepGps` undefined.
    await editProject(await scope(), "Renamed by a stale form", { wsc: false, source: "", keepGps: undefined });
    expect((await scope()).project).toMatchObject({ name: "Renamed by a stale form", keepGps: true });
    expect((await row(id)).gps_lat).toBe(LONDON.lat);
    await settings(false);
    expect((await row(id)).gps_lat).toBeNull();
  });

  it("writes the capture data into Download images data and the ZIP's images.csv: positions only where kept, none for a link's visitors", async () => {
    const own = (await makeProject([{ actor: manager.actor, role: "manager" }])).id;
    const s = () => projectScope(manager.actor, own);
    await editProject(await s(), "Capture CSV", { wsc: false, source: "", keepGps: true });
    const id = await addImageFile(
      await s(),
      await photo({ taken: "2024:05:17 14:03:09", make: "Canon", model: "Canon EOS R6", gps: LONDON }),
      meta("Shelf"),
    );
    const bare = await addImageFile(await s(), await png(), meta("No EXIF"));
    const csvOf = async (stream: ReadableStream<Uint8Array>) => {
      const rows = parse(await new Response(stream).text()) as string[][]; // text() drops the BOM
      return rows.slice(1).map((r) => Object.fromEntries(rows[0]!.map((name, i) => [name, r[i]])));
    };
    const dataOf = async () => csvOf((await csvOfSelection(await s(), { all: false, ids: [id, bare] })).stream);
    expect(await dataOf()).toEqual([
      expect.objectContaining({
        "Image ID": String(id),
        Taken: "2024-05-17T14:03:09",
        Camera: "Canon EOS R6",
        Latitude: String(LONDON.lat),
        Longitude: String(LONDON.lon),
      }),
      expect.objectContaining({ "Image ID": String(bare), Taken: "", Camera: "", Latitude: "", Longitude: "" }),
    ]);
    // Positions no longer kept: no position columns (the positions themselves are gone).
    await editProject(await s(), "Capture CSV", { wsc: false, source: "", keepGps: false });
    const [first] = await dataOf();
    expect(first).toMatchObject({ Taken: "2024-05-17T14:03:09", Camera: "Canon EOS R6" });
    expect(Object.keys(first!)).not.toContain("Latitude");

    // A share link's ZIP (metadata shown): images.csv without capture data, as its page shows none.
    await editProject(await s(), "Capture CSV", { wsc: false, source: "", keepGps: true });
    const board = await boardScope(manager.actor, (await createBoard(await s(), { title: "Shared", imageIds: [id] })).id);
    const [link] = await createShareLinks(board, [null], { expiry: "30", allowDownload: true, showMetadata: true }, "capture");
    const opened = await resolveSharedUrl(link!.path.slice("/shared-board/".length), "10.0.0.9", 60_000);
    if (opened.status !== "ok") throw new Error(opened.status);
    const zipCsv = async (scope: Parameters<typeof zipOfSelection>[0]) => {
      const zip = Buffer.from(await new Response((await zipOfSelection(scope, { all: false, ids: [id] })).stream).arrayBuffer());
      // Python's zipfile reads it: another implementation than the writer's.
      const text = execFileSync(
        "python3",
        ["-c", "import io,sys,zipfile\nsys.stdout.buffer.write(zipfile.ZipFile(io.BytesIO(sys.stdin.buffer.read())).read('images.csv'))"],
        { input: zip },
      );
      return csvOf(new Blob([text]).stream());
    };
    // The members' images.csv as their download: the position columns are back, empty (turning keeping off forgot it).
    expect((await zipCsv(await s()))[0]).toMatchObject({
      Taken: "2024-05-17T14:03:09",
      Camera: "Canon EOS R6",
      Latitude: "",
      Longitude: "",
    });
    const visitor = (await zipCsv(opened.scope))[0]!;
    expect(visitor).toMatchObject({ "Image ID": String(id), Title: "Shelf" });
    expect(Object.keys(visitor).filter((k) => ["Taken", "Camera", "Latitude", "Longitude"].includes(k))).toEqual([]);
  });

  it("accepts a file without EXIF, or with an impossible date or odd text, with nothing known but what can be read", async () => {
    const plain = await row(await addImageFile(await scope(), await png(), meta("Plain")));
    expect(plain).toMatchObject({ taken_at: 0, camera_make: "", camera_model: "", gps_lat: null });
    const odd = await row(
      await addImageFile(
        await scope(),
        await photo({ taken: "2024:02:30 10:00:00", make: " \u0001Nikon\u0007 ", model: "x".repeat(300) }),
        meta("Odd"),
      ),
    );
    expect(odd).toMatchObject({ taken_at: 0, camera_make: "Nikon", camera_model: "x".repeat(100) });
    const zero = await row(await addImageFile(await scope(), await photo({ taken: "0000:00:00 00:00:00" }), meta("Zero")));
    expect(zero.taken_at).toBe(0);
  });

  describe("the grid by capture date", () => {
    let sorted: number;
    const ids: { id: number; taken: number; title: string }[] = [];
    const grid = async (params: Record<string, string>) =>
      withFilter(await projectScope(manager.actor, sorted), new URLSearchParams(params));
    const everyPage = async (s: GridScope, limit: number) => {
      const seen: number[] = [];
      let after = null;
      const prevs: (string | null)[] = [];
      for (;;) {
        const page = await gridPage(s, { after: decodeCursor(after), limit });
        seen.push(...page.cards.map((c) => c.id));
        prevs.push(page.prev);
        if (!page.next) return { seen, prevs };
        after = page.next;
      }
    };

    beforeAll(async () => {
      sorted = (await makeProject([{ actor: manager.actor, role: "manager" }])).id;
      // Added in one order, taken in another; two taken at the same second (the id decides), three with no date.
      const taken = [
        at(2021, 6, 1),
        at(2024, 1, 1),
        0,
        at(2022, 3, 3),
        at(2024, 1, 1),
        0,
        at(2019, 12, 31, 23),
        at(2023, 7, 7),
        0,
        at(2020, 2, 29),
      ];
      await insertImageRows(
        await projectScope(manager.actor, sorted),
        taken.map((takenAt, i) => ({
          file: { ...fakeFile(9000 + i), capture: { takenAt, cameraMake: "", cameraModel: "", gps: null } },
          meta: meta(`Pic ${i}`, i % 2 ? ["aisle"] : []),
          at: 1_700_000_000_000 + i * 1000,
        })),
      );
      const rows = await db()
        .selectFrom("images")
        .select(["id", "taken_at", "title"])
        .where("project_id", "=", sorted)
        .orderBy("id")
        .execute();
      ids.push(...rows.map((r) => ({ id: r.id, taken: Number(r.taken_at), title: r.title })));
    });
    const byTaken = (list: typeof ids) => [...list].sort((a, b) => b.taken - a.taken || b.id - a.id).map((r) => r.id);

    it("sorts newest taken first with the unknown last, and its keyset pages meet without a gap or a repeat, forwards and back", async () => {
      const s = await grid({ sort: "taken" });
      const { seen } = await everyPage(s, 3);
      expect(seen).toEqual(byTaken(ids));
      // Back from the last page to the first along the `prev` cursors.
      const back: number[] = [];
      let page = await gridPage(s, { after: decodeCursor((await gridPage(s, { limit: 7 })).next), limit: 3 });
      back.unshift(...page.cards.map((c) => c.id));
      while (page.prev) {
        page = await gridPage(s, { before: decodeCursor(page.prev), limit: 3 });
        back.unshift(...page.cards.map((c) => c.id));
      }
      expect(back).toEqual(byTaken(ids).slice(0, 10));
      // Without `sort`, newest added first as ever.
      expect((await everyPage(await grid({}), 4)).seen).toEqual(ids.map((r) => r.id).reverse());
    });

    it("narrows to the days asked, both included, never to images without a date; counts and selections follow", async () => {
      const s = await grid({ takenFrom: "2020-02-29", takenTo: "2023-07-07", sort: "taken" });
      const inRange = ids.filter((r) => r.taken >= at(2020, 2, 29, 0) && r.taken < at(2023, 7, 8, 0));
      expect(inRange.length).toBe(4);
      expect((await everyPage(s, 2)).seen).toEqual(byTaken(inRange));
      expect(await gridTotal(s)).toBe(4);
      const picked = await selectedImageIds(s, { all: true, ids: [] }).execute();
      expect(picked.map((r) => r.id).sort((a, b) => a - b)).toEqual(inRange.map((r) => r.id));
      // Only an end: everything dated up to it, still no undated image.
      const until = await grid({ takenTo: "2020-01-01" });
      expect((await gridPage(until, { limit: 50 })).cards.map((c) => c.id)).toEqual(
        ids.filter((r) => r.taken === at(2019, 12, 31, 23)).map((r) => r.id),
      );
      // A day that is no day is no filter (the sidebar's field), not an error.
      expect(await gridTotal(await grid({ takenFrom: "2024-02-30" }))).toBe(ids.length);
    });

    it("counts the attribute filter's values within the capture-date range, as the grid shows it", async () => {
      const s = await projectScope(manager.actor, sorted);
      const era = await createAttribute(s, { name: "Era", type: 3 });
      await setAttributeValues(
        s,
        ids.map((r) => ({ imageId: r.id, attributeId: era, value: r.taken >= at(2022, 1, 1) ? "Recent" : "Older" })),
      );
      const counts = async (params: Record<string, string>) =>
        Object.fromEntries((await attributeFacets(await grid(params))).find((f) => f.id === era)!.values.map((v) => [v.value, v.count]));
      const recent = ids.filter((r) => r.taken >= at(2022, 1, 1)).length;
      expect(await counts({ takenFrom: "2022-01-01" })).toEqual({ Recent: recent, Older: 0 });
      expect(await counts({ q: "aisle", takenTo: "2021-12-31" })).toMatchObject({ Recent: 0 });
      expect(await counts({})).toEqual({ Recent: recent, Older: ids.length - recent });
    });

    it("keeps a keyword search's ranking first and the capture date after it, and a common word is not walked in creation order", async () => {
      const expected = byTaken(ids.filter((r) => Number(r.title.slice(4)) % 2 === 1));
      const s = await grid({ q: "aisle", sort: "taken" });
      expect((await everyPage(s, 2)).seen).toEqual(expected);
      const from = walkSettings.from;
      walkSettings.from = 1; // every word is "common": the walk would go along the creation index
      try {
        expect((await everyPage(await grid({ q: "aisle", sort: "taken" }), 2)).seen).toEqual(expected);
      } finally {
        walkSettings.from = from;
      }
    });
  });

  describe("over the API", () => {
    let server: RunningServer;
    let api: ApiChecker;
    let secret = "";
    let imageId = 0;
    let copyId = 0;
    let apiProject = 0;

    beforeAll(async () => {
      apiProject = (await makeProject([{ actor: manager.actor, role: "manager" }])).id;
      const s = await projectScope(manager.actor, apiProject);
      const dated = await photo({ taken: "2022:08:09 10:11:12", make: "FUJIFILM", model: "X-T5", gps: LONDON });
      imageId = await addImageFile(s, dated, meta("Dated"));
      copyId = await addImageFile(s, dated, meta("Copy"));
      await addImageFile(s, await photo({}), meta("Undated"));
      await addImageFile(s, await photo({ taken: "2018:01:01 00:00:00" }), meta("Older"));
      secret = (await createToken(manager.actor, { name: "t", write: false, projects: null, days: 30 })).secret;
      server = await startAppServer(t);
      api = await apiChecker(server.base, () => secret);
    }, 90_000);
    afterAll(async () => {
      await server?.stop();
    });

    it("gives an image's capture time, camera and (not kept here) no location", async () => {
      const { res, body } = await api.call(`/images/${imageId}`);
      expect(res.status, JSON.stringify(body)).toBe(200);
      expect(body).toMatchObject({
        takenAt: "2022-08-09T10:11:12",
        camera: { make: "FUJIFILM", model: "X-T5" },
        location: null,
        possibleDuplicateOf: null,
      });
      // The same file uploaded again: a possible duplicate of the first.
      expect((await api.call(`/images/${copyId}`)).body).toMatchObject({ possibleDuplicateOf: imageId, takenAt: "2022-08-09T10:11:12" });
    });

    it("lists a project newest taken first and by a range of days; a day that is no day is refused with 400", async () => {
      const titles = async (query: string) => {
        const { res, body } = await api.call(`/projects/${apiProject}/images?${query}`);
        expect(res.status).toBe(200);
        return (body.items as { title: string }[]).map((i) => i.title);
      };
      expect(await titles("sort=taken")).toEqual(["Copy", "Dated", "Older", "Undated"]);
      expect(await titles("sort=added")).toEqual(["Older", "Undated", "Copy", "Dated"]);
      expect(await titles("takenFrom=2020-01-01")).toEqual(["Copy", "Dated"]);
      expect(await titles("takenTo=2018-01-01&sort=taken")).toEqual(["Older"]);
      for (const bad of ["takenFrom=2024-13-01", "takenTo=yesterday", "sort=taken_at", "takenFrom=1969-12-31"]) {
        const { res, body } = await api.call(`/projects/${apiProject}/images?${bad}`);
        expect(res.status, bad).toBe(400);
        expect(body.errors?.length, bad).toBeGreaterThan(0);
      }
    });
  });
});
