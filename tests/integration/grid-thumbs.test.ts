import { existsSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "~/db/connection.server";
import { gridThumbKey, mediaUrl } from "~/lib/media";
import { imageScope } from "~/models/scope.server";
import { addImageFile, removeImage, saveImageEdit } from "~/services/ingest.server";
import { jobRegistry } from "~/services/job-registry.server";
import { runOnce } from "~/services/jobs.server";
import { freshDatabase, type TestDatabase } from "../helpers/db";
import { meta } from "../helpers/fixtures";
import { jpeg } from "../helpers/images";
import { mediaOf, memberAndStranger } from "../helpers/media";
import { startAppServer, type AppServer } from "../helpers/server";

/**
 * The grid's own thumbnails (240 pixels wide, lib/media.ts) over real HTTP: made on ingest, served to members only
 * like every derivative, made on the first request for an image stored before there were any, and purged with the
 * image. Needs the production build.
 */
describe("grid thumbnails", () => {
  let t: TestDatabase;
  let app: AppServer;
  let cookie: string;
  let stranger: string;
  let editor: Awaited<ReturnType<typeof memberAndStranger>>["editor"];
  let first: number;
  let second: number;

  beforeAll(async () => {
    t = await freshDatabase("sqlite");
    const people = await memberAndStranger();
    ({ cookie, stranger, editor } = people);
    first = await addImageFile(people.scope, await jpeg(640, 480, "#885522"), meta("Aisle"));
    second = await addImageFile(people.scope, await jpeg(800, 400, "#225588"), meta("Shelf"));
    app = await startAppServer(t);
  }, 60_000);
  afterAll(async () => {
    await app?.stop();
    await t?.drop();
  });

  const get = (url: string, who = cookie) => fetch(`${app.base}${url}`, { headers: who ? { Cookie: who } : {}, redirect: "manual" });
  const file = (key: string) => path.join(t.dataDir, "objects", key);
  const gridOf = async (id: number) => gridThumbKey((await mediaOf(id)).keys.thumb_key);
  const objectRow = (key: string) => db().selectFrom("objects").select("status").where("key", "=", key).executeTakeFirst();
  const runJobs = async () => {
    while (await runOnce(jobRegistry, "grid-thumbs-test"));
  };

  it("is stored on ingest, 240 pixels wide, and sent to members of the project only", async () => {
    const key = await gridOf(first);
    expect(await sharp(readFileSync(file(key))).metadata()).toMatchObject({ format: "webp", width: 240, height: 180 });
    expect(await objectRow(key)).toEqual({ status: "stored" });
    const res = await get(mediaUrl(first, key));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/webp");
    expect(res.headers.get("cache-control")).toBe("private, max-age=31536000, immutable");
    expect(Buffer.from(await res.arrayBuffer()).equals(readFileSync(file(key)))).toBe(true);
    expect((await get(mediaUrl(first, key), stranger)).status).toBe(404);
    const anonymous = await get(mediaUrl(first, key), "");
    expect(anonymous.status).toBe(302);
    expect(anonymous.headers.get("location")).toMatch(/^\/login\?redirectTo=/);
  });

  it("is made on its first request for an image stored before there were any, from its thumbnail, and kept", async () => {
    const key = await gridOf(second);
    rmSync(file(key));
    await db().deleteFrom("objects").where("key", "=", key).execute();
    const res = await get(mediaUrl(second, key));
    expect(res.status).toBe(200);
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(await sharp(bytes).metadata()).toMatchObject({ format: "webp", width: 240, height: 120 });
    expect(bytes.equals(readFileSync(file(key))), "the bytes sent are the ones now stored").toBe(true);
    // Recorded like any derivative, so that the image's purge takes it (below).
    expect(await objectRow(key)).toEqual({ status: "stored" });
    expect((await get(mediaUrl(second, key))).status).toBe(200);
    // A stranger's request for a missing one makes nothing: access is checked first.
    rmSync(file(key));
    expect((await get(mediaUrl(second, key), stranger)).status).toBe(404);
    expect(existsSync(file(key))).toBe(false);
    expect((await get(mediaUrl(second, key))).status).toBe(200);
  });

  it("answers 404 and makes nothing for a grid key that is not the image's", async () => {
    const otherImages = await gridOf(second);
    const madeUp = `thumbs/ab/cd/${"ab".repeat(32)}-w240.webp`;
    const previewLike = (await mediaOf(first)).keys.preview_key.replace(/\.webp$/, "-w240.webp");
    const twice = (await gridOf(first)).replace(/\.webp$/, "-w240.webp");
    for (const key of [otherImages, madeUp, previewLike, twice]) {
      expect((await get(mediaUrl(first, key))).status, key).toBe(404);
      if (key !== otherImages) expect(existsSync(file(key)), key).toBe(false);
    }
  });

  it("follows a turn: the rotated thumbnail's own grid thumbnail, stored with it", async () => {
    const { scope, image } = await imageScope(editor.actor, first);
    await saveImageEdit(scope, image, { title: "Aisle", description: "", keywords: [], ocrText: "" }, 90, image.version);
    const key = await gridOf(first);
    expect(key).toMatch(/-r90-w240\.webp$/);
    const res = await get(mediaUrl(first, key));
    expect(res.status).toBe(200);
    expect(await sharp(Buffer.from(await res.arrayBuffer())).metadata()).toMatchObject({ width: 180, height: 240 });
  });

  it("goes with its image: deleted by the purge, the one made on request too", async () => {
    const keys = [await gridOf(first), await gridOf(second)];
    const unturned = gridThumbKey(
      (
        await db()
          .selectFrom("image_versions")
          .select("thumb_key")
          .where("image_id", "=", first)
          .where("version", "=", 1)
          .executeTakeFirstOrThrow()
      ).thumb_key,
    );
    for (const id of [first, second]) {
      const { scope, image } = await imageScope(editor.actor, id);
      await removeImage(scope, image);
    }
    await runJobs();
    for (const key of [...keys, unturned]) {
      expect(existsSync(file(key)), key).toBe(false);
      expect(await objectRow(key), key).toBeUndefined();
    }
  });
});
