import sharp, { type Sharp } from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "~/db/connection.server";
import { bandsOf, distance, type Similarity } from "~/lib/similarity";
import { deleteImagesBulk } from "~/models/bulk.server";
import { COPIES_SHOWN, keepBoth, lookAlikes, lookedLike, lookupSettings, possibleDuplicates } from "~/models/duplicates.server";
import { insertImageRows } from "~/models/images.server";
import { queueReimport } from "~/models/reimport.server";
import { projectScope } from "~/models/scope.server";
import { drawDemoImage } from "~/services/demo.server";
import { storeImageFile } from "~/services/image-files.server";
import { addImageFile, removeImage, saveImageEdit } from "~/services/ingest.server";
import { jobRegistry } from "~/services/job-registry.server";
import { runOnce } from "~/services/jobs.server";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";
import { fakeFile, insertManyImages, makeProject, makeUser, meta } from "../helpers/fixtures";
import { photo } from "../helpers/images";

/**
 * Near-duplicates on both databases: an upload that looks like an image of its project is marked as its possible
 * duplicate (turned copies too, other projects never); an editor's turn keeps an image's hashes; the lookup's
 * indexed quarters find every image within the bound; Possible duplicates pages, and loses a pair when someone keeps
 * both or deletes the look-alike; a re-import gives images stored before any of this their hashes and capture data.
 */
const row = (id: number) => db().selectFrom("images").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
const jpegOf = (buf: Buffer, edit: (s: Sharp) => Sharp) => edit(sharp(buf)).jpeg({ quality: 80 }).toBuffer();

/** A hash with `flips[q]` bits flipped in quarter q (the lowest bits of each). */
function flipped(phash: string, flips: number[]): string {
  return bandsOf(phash)
    .map((band, q) => (band ^ ((1 << flips[q]!) - 1)).toString(16).padStart(4, "0"))
    .join("");
}

describe.each(dialects)("near-duplicates (%s)", (dialect) => {
  let t: TestDatabase;
  let manager: Awaited<ReturnType<typeof makeUser>>;
  let projectId = 0;
  let otherId = 0;
  const scope = () => projectScope(manager.actor, projectId);
  let shelf: Buffer;

  beforeAll(async () => {
    t = await freshDatabase(dialect);
    manager = await makeUser();
    projectId = (await makeProject([{ actor: manager.actor, role: "manager" }])).id;
    otherId = (await makeProject([{ actor: manager.actor, role: "manager" }])).id;
    shelf = await drawDemoImage(7, 640, 480);
  });
  afterAll(async () => {
    await t.drop();
  });

  it("marks an upload that looks like an image of its project (smaller, turned) as its possible duplicate; not a stranger, not across projects", async () => {
    const original = await addImageFile(await scope(), shelf, meta("Shelf"));
    expect((await row(original)).dup_of).toBeNull();
    const smaller = await addImageFile(await scope(), await jpegOf(shelf, (s) => s.resize(320)), meta("Smaller"));
    const turned = await addImageFile(await scope(), await jpegOf(shelf, (s) => s.rotate(270)), meta("Turned"));
    const stranger = await addImageFile(await scope(), await drawDemoImage(8, 640, 480), meta("Stranger"));
    const elsewhere = await addImageFile(await projectScope(manager.actor, otherId), shelf, meta("Elsewhere"));
    expect((await row(smaller)).dup_of).toBe(original);
    // The closest: the original and the smaller copy are both alike; the turned one found by its turned hashes.
    expect([original, smaller]).toContain((await row(turned)).dup_of);
    expect((await row(stranger)).dup_of).toBeNull();
    expect((await row(elsewhere)).dup_of).toBeNull();
    expect(await lookedLike(await scope(), smaller)).toMatchObject({ id: original, title: "Shelf" });
  });

  it("keeps an image's hashes when an editor turns it, so the same file uploaded again is found", async () => {
    const buf = await drawDemoImage(9, 640, 480);
    const id = await addImageFile(await scope(), buf, meta("To turn"));
    const before = await row(id);
    const change = {
      title: before.title,
      description: before.description,
      keywords: JSON.parse(before.keywords) as string[],
      ocrText: before.ocr_text,
    };
    await saveImageEdit(await scope(), before, change, 90);
    const after = await row(id);
    expect(after.rotation).toBe(90);
    expect({ phash: after.phash, dhash: after.dhash }).toEqual({ phash: before.phash, dhash: before.dhash });
    const again = await addImageFile(await scope(), buf, meta("Same file"));
    expect((await row(again)).dup_of).toBe(id);
  });

  it("finds every image within 7 bits of the DCT hash through the indexed quarters, however they spread, and none 8 bits off", async () => {
    const probeProject = (await makeProject([{ actor: manager.actor, role: "manager" }])).id;
    const base = "9c3a5e71d2f4086b";
    const dhash = "0123456789abcdef";
    const spreads = {
      "7 in one quarter": [7, 0, 0, 0],
      "2+2+2+1": [2, 2, 2, 1],
      "1+1+1+1": [1, 1, 1, 1],
      "2+2+2+2": [2, 2, 2, 2],
      "8 in one": [8, 0, 0, 0],
    };
    const rows = Object.entries(spreads).map(([title, flips], i) => ({
      file: { ...fakeFile(70_000 + i), similarity: { phash: flipped(base, flips), dhash, turned: [] } as Similarity },
      meta: meta(title),
      at: 1_700_000_000_000 + i,
    }));
    await insertImageRows(await projectScope(manager.actor, probeProject), rows);
    const found = await lookAlikes(db(), probeProject, { phash: base, dhash, turned: [] }, { limit: 10 });
    expect(found.map((f) => f.title).sort()).toEqual(["1+1+1+1", "2+2+2+1", "7 in one quarter"]);
    expect(found.find((f) => f.title === "1+1+1+1")?.distance).toBe(4);
  });

  it("finds an image within 3 bits of the picture turned, however they spread, and none 4 bits off", async () => {
    const probeProject = (await makeProject([{ actor: manager.actor, role: "manager" }])).id;
    const base = "9c3a5e71d2f4086b";
    const dhash = "0123456789abcdef";
    const spreads = { "3 in one quarter": [3, 0, 0, 0], "1+1+1": [1, 1, 1, 0], "4 in one quarter": [4, 0, 0, 0], "1+1+1+1": [1, 1, 1, 1] };
    const rows = Object.entries(spreads).map(([title, flips], i) => ({
      file: { ...fakeFile(71_000 + i), similarity: { phash: flipped(base, flips), dhash, turned: [] } as Similarity },
      meta: meta(title),
      at: 1_700_000_000_000 + i,
    }));
    await insertImageRows(await projectScope(manager.actor, probeProject), rows);
    // The picture as uploaded is unlike all of them; one of its turns is the base.
    const upload = { phash: "0000000000000000", dhash: "ffffffffffffffff", turned: [{ phash: base, dhash }] };
    const found = await lookAlikes(db(), probeProject, upload, { limit: 10 });
    expect(found.map((f) => f.title).sort()).toEqual(["1+1+1", "3 in one quarter"]);
  });

  it("finds an exact copy past the lookup's bound, and puts a copy of a copy in its group; two near-copies uploaded at once find each other", async () => {
    const crowd = (await makeProject([{ actor: manager.actor, role: "manager" }])).id;
    const s = await projectScope(manager.actor, crowd);
    const picture = await drawDemoImage(31, 480, 360);
    const first = await addImageFile(s, picture, meta("First"));
    const second = await addImageFile(s, await jpegOf(picture, (x) => x.resize(300)), meta("Second"));
    // A crowd sharing the first quarter of the picture's hash (blank pages alike in one quarter), past the bound.
    const { phash } = (await row(first)) as { phash: string };
    const bound = lookupSettings.maxPerQuarter;
    lookupSettings.maxPerQuarter = 3;
    try {
      await insertImageRows(
        s,
        Array.from({ length: 6 }, (_, i) => ({
          file: {
            ...fakeFile(80_000 + i),
            similarity: { phash: `${phash.slice(0, 4)}${"f0f0".repeat(3)}`, dhash: "ffffffffffffffff", turned: [] },
          },
          meta: meta(`Crowd ${i}`),
          at: 1_700_000_000_000 + i,
        })),
      );
      const third = await addImageFile(s, await jpegOf(picture, (x) => x.resize(300)), meta("Third"));
      // Second and third are the same file: the third's closest look-alike is the second, a possible copy of the
      // first; the third joins that group, named by its first image (groups are one level deep).
      expect((await row(second)).dup_of).toBe(first);
      expect((await row(third)).dup_of).toBe(first);
      const exact = await lookAlikes(db(), crowd, { phash, dhash: (await row(first)).dhash!, turned: [] }, { limit: 1 });
      expect(exact.map((l) => l.id)).toEqual([first]);
    } finally {
      lookupSettings.maxPerQuarter = bound;
    }
    const pairProject = (await makeProject([{ actor: manager.actor, role: "manager" }])).id;
    const p = await projectScope(manager.actor, pairProject);
    const twins = await Promise.all([41, 42, 43].map((n) => drawDemoImage(n, 480, 360)));
    const darker = await Promise.all(twins.map((buf) => jpegOf(buf, (x) => x.modulate({ brightness: 0.92 }))));
    const ids = await Promise.all(
      twins.flatMap((buf, i) => [addImageFile(p, buf, meta(`Twin ${i} a`)), addImageFile(p, darker[i]!, meta(`Twin ${i} b`))]),
    );
    for (let i = 0; i < 3; i++) {
      const [a, b] = [await row(ids[2 * i]!), await row(ids[2 * i + 1]!)];
      // Whichever went in second names the other.
      expect(a.dup_of === b.id || b.dup_of === a.id, `twins ${i}`).toBe(true);
    }
  });

  it("gives a flat picture no hashes (its bits would be noise), tells tiny pictures apart, and lays transparency on white", async () => {
    const flat = await storeImageFile(
      await sharp({ create: { width: 64, height: 48, channels: 3, background: "#808080" } })
        .png()
        .toBuffer(),
    );
    expect(flat.similarity).toBeUndefined();
    const tiny = async (pixels: number[]) =>
      (
        await storeImageFile(
          await sharp(Buffer.from(pixels), { raw: { width: 2, height: 2, channels: 1 } })
            .png()
            .toBuffer(),
        )
      ).similarity!;
    const [a, b] = [await tiny([0, 255, 255, 0]), await tiny([255, 0, 0, 255])];
    expect(distance(a, b)).toBeNull();
    // Two PNGs a browser shows alike (fully transparent), whatever colour hides under alpha 0: both flat, so neither
    // is anyone's look-alike; and a half-transparent picture hashes as on white.
    const clear = (rgb: string) =>
      sharp({ create: { width: 32, height: 32, channels: 4, background: `${rgb}00` } })
        .png()
        .toBuffer();
    expect((await storeImageFile(await clear("#ff0000"))).similarity).toBeUndefined();
    expect((await storeImageFile(await clear("#0000ff"))).similarity).toBeUndefined();
  });

  it("lists possible duplicates in groups, the newest upload's first, by pages; keeping both takes an upload out, and deleting a group's first leaves the rest grouped", async () => {
    const listProject = (await makeProject([{ actor: manager.actor, role: "manager" }])).id;
    const s = await projectScope(manager.actor, listProject);
    const originals = await Promise.all([11, 12, 13].map((n) => drawDemoImage(n, 480, 360)));
    const first: number[] = [];
    for (const [i, buf] of originals.entries()) first.push(await addImageFile(s, buf, meta(`Original ${i}`)));
    const copies: number[] = [];
    for (const [i, buf] of originals.entries())
      copies.push(await addImageFile(s, await jpegOf(buf, (x) => x.modulate({ brightness: 1.1 })), meta(`Copy ${i}`)));
    // A second copy of the first original, smaller: the newest upload, so its group comes first.
    const again = await addImageFile(s, await jpegOf(originals[0]!, (x) => x.resize(320)), meta("Copy 0 again"));
    const listed = (page: Awaited<ReturnType<typeof possibleDuplicates>>) =>
      page.groups.map((g) => [g.first.id, g.copies.map((c) => c.id), g.count]);

    const page1 = await possibleDuplicates(s, { limit: 2 });
    expect(listed(page1)).toEqual([
      [first[0], [again, copies[0]], 2],
      [first[2], [copies[2]], 1],
    ]);
    const page2 = await possibleDuplicates(s, { after: page1.next, limit: 2 });
    expect(listed(page2)).toEqual([[first[1], [copies[1]], 1]]);
    expect(page2.next).toBeNull();

    expect(await keepBoth(s, copies[2]!)).toBe(true);
    expect(await keepBoth(s, copies[2]!)).toBe(false);
    // An image of another project is not this project's to keep.
    expect(await keepBoth(s, (await possibleDuplicates(await scope())).groups[0]?.copies[0]?.id ?? first[0]!)).toBe(false);
    expect(listed(await possibleDuplicates(s))).toEqual([
      [first[0], [again, copies[0]], 2],
      [first[1], [copies[1]], 1],
    ]);

    // The first of a group deleted: the oldest copy left is the group's first now, and the others its copies.
    await removeImage(s, await row(first[0]!));
    // A group's only copy left alone is a group no more.
    await removeImage(s, await row(first[1]!));
    expect(listed(await possibleDuplicates(s))).toEqual([[copies[0], [again], 1]]);
    expect(await lookedLike(s, again)).toMatchObject({ id: copies[0] });
    expect(await lookedLike(s, copies[1]!)).toBeNull();
    expect((await row(copies[1]!)).dup_of).toBeNull();
    // Another project's possible duplicates are its own.
    const others = (await possibleDuplicates(await scope())).groups.flatMap((g) => [g.first.id, ...g.copies.map((c) => c.id)]);
    expect(others.some((id) => [...copies, ...first, again].includes(id))).toBe(false);
  });

  it("deleting a selection regroups every group whose first was in it, and a group deleted whole leaves nothing behind", async () => {
    const bulkProject = (await makeProject([{ actor: manager.actor, role: "manager" }])).id;
    const s = await projectScope(manager.actor, bulkProject);
    const pictures = await Promise.all([51, 52].map((n) => drawDemoImage(n, 480, 360)));
    const heads: number[] = [];
    const copyIds: number[][] = [];
    for (const [i, buf] of pictures.entries()) {
      heads.push(await addImageFile(s, buf, meta(`Head ${i}`)));
      copyIds.push([
        await addImageFile(s, await jpegOf(buf, (x) => x.modulate({ brightness: 1.1 })), meta(`Copy ${i} a`)),
        await addImageFile(s, await jpegOf(buf, (x) => x.resize(320)), meta(`Copy ${i} b`)),
      ]);
    }
    // The first group's head alone; the second group whole.
    expect(await deleteImagesBulk(s, { all: false, ids: [heads[0]!, heads[1]!, ...copyIds[1]!] })).toEqual({ affected: 4, skipped: 0 });
    const page = await possibleDuplicates(s);
    expect(page.groups.map((g) => [g.first.id, g.copies.map((c) => c.id)])).toEqual([[copyIds[0]![0], [copyIds[0]![1]]]]);
    expect((await row(copyIds[0]![0]!)).dup_of).toBeNull();
  });

  it("re-import gives images stored before Koala read them their capture data, upright size and hashes, and marks a look-alike of an older one", async () => {
    const oldProject = (await makeProject([{ actor: manager.actor, role: "manager" }])).id;
    const s = await projectScope(manager.actor, oldProject);
    const sideways = await photo({ taken: "2021:04:05 06:07:08", make: "Canon", model: "Canon EOS R6", orientation: 6 }, 640, 480);
    const picture = await drawDemoImage(21, 640, 480);
    const copy = await jpegOf(picture, (x) => x.resize(400));
    // A copy of the copy: its closest look-alike is the copy (the same picture resized again), whose group it joins.
    const copyOfCopy = await jpegOf(copy, (x) => x.resize(380));
    // As stored before: no capture data, no hashes, the file's own (sideways) size.
    const stored = await Promise.all(
      [sideways, picture, copy, copyOfCopy].map(async (buf) => {
        const { capture: _capture, similarity: _similarity, ...file } = await storeImageFile(buf);
        return file;
      }),
    );
    stored[0] = { ...stored[0]!, width: 640, height: 480 };
    await insertImageRows(
      s,
      stored.map((file, i) => ({ file, meta: meta(`Old ${i}`), at: 1_600_000_000_000 + i })),
    );
    const ids = (await db().selectFrom("images").select("id").where("project_id", "=", oldProject).orderBy("id").execute()).map(
      (r) => r.id,
    );
    expect((await row(ids[0]!)).phash).toBeNull();

    await queueReimport(s, "files");
    while (await runOnce(jobRegistry, "duplicates-test"));
    expect(await row(ids[0]!)).toMatchObject({
      taken_at: Date.UTC(2021, 3, 5, 6, 7, 8) / 1000,
      camera_model: "Canon EOS R6",
      width: 480,
      height: 640,
    });
    expect((await row(ids[1]!)).phash).toMatch(/^[0-9a-f]{16}$/);
    expect((await row(ids[1]!)).dup_of).toBeNull();
    expect((await row(ids[2]!)).dup_of).toBe(ids[1]);
    expect((await row(ids[3]!)).dup_of).toBe(ids[1]);
  });

  it("shows a group's newest copies, at most twelve, with how many it has in all", async () => {
    const bigProject = (await makeProject([{ actor: manager.actor, role: "manager" }])).id;
    const s = await projectScope(manager.actor, bigProject);
    await insertManyImages(s, 14, { first: 70_000, title: (i) => `Daily shelf ${i}` });
    const [head, ...rest] = (await db().selectFrom("images").select("id").where("project_id", "=", bigProject).orderBy("id").execute()).map(
      (r) => r.id,
    );
    await db().updateTable("images").set({ dup_of: head! }).where("id", "in", rest).execute();
    const [group] = (await possibleDuplicates(s)).groups;
    expect(group!.count).toBe(13);
    expect(group!.copies.map((c) => c.id)).toEqual(rest.reverse().slice(0, COPIES_SHOWN));
    expect(COPIES_SHOWN).toBe(12);
  });
});
