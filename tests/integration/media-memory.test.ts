import { rmSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addImageFile } from "~/services/ingest.server";
import { freshDatabase, type TestDatabase } from "../helpers/db";
import { meta } from "../helpers/fixtures";
import { jpeg } from "../helpers/images";
import { startAppServer, type AppServer } from "../helpers/server";
import { mediaOf, memberAndStranger } from "../helpers/media";

/**
 * MEDIA_CACHE_MB: a thumbnail or preview the app has sent is kept in memory by its content-addressed key, and sent
 * from there afterwards, still only after the access check. Downloads always read the store. Needs the build.
 */
describe.each([
  { name: "kept", cacheMb: "1" },
  { name: "off", cacheMb: "0" },
])("small objects in memory once sent (MEDIA_CACHE_MB $name)", ({ cacheMb }) => {
  let t: TestDatabase;
  let app: AppServer;
  let cookie: string;
  let stranger: string;
  let thumb: string;
  let thumbFile: string;
  let original: string;
  let originalFile: string;

  beforeAll(async () => {
    t = await freshDatabase("sqlite");
    const { scope, ...people } = await memberAndStranger();
    ({ cookie, stranger } = people);
    const media = await mediaOf(await addImageFile(scope, await jpeg(640, 480, "#446688"), meta("Till")));
    ({ thumb, original } = media);
    thumbFile = path.join(t.dataDir, "objects", media.keys.thumb_key);
    originalFile = path.join(t.dataDir, "objects", media.keys.storage_key);
    app = await startAppServer(t, { MEDIA_CACHE_MB: cacheMb });
  }, 60_000);
  afterAll(async () => {
    await app?.stop();
    await t?.drop();
  });

  const get = (url: string, who = cookie) => fetch(`${app.base}${url}`, { headers: who ? { Cookie: who } : {}, redirect: "manual" });
  const answer = async (res: Response) => ({
    status: res.status,
    body: Buffer.from(await res.arrayBuffer()),
    headers: Object.fromEntries(
      ["content-type", "content-length", "etag", "cache-control", "content-security-policy", "x-content-type-options"].map((h) => [
        h,
        res.headers.get(h),
      ]),
    ),
  });

  it(
    cacheMb === "0"
      ? "reads the store every time"
      : "sends a thumbnail from memory once sent: the same bytes and headers, the store not read",
    async () => {
      const first = await answer(await get(thumb));
      expect(first.status).toBe(200);
      expect(first.headers["content-type"]).toBe("image/webp");
      expect(Number(first.headers["content-length"])).toBe(first.body.length);
      expect((await answer(await get(thumb))).body.equals(first.body)).toBe(true);
      rmSync(thumbFile); // gone from the store: only a kept copy can answer now
      const after = await answer(await get(thumb));
      if (cacheMb === "0") expect(after.status).toBe(404);
      else expect(after).toEqual(first);
    },
  );

  it("still checks access before a kept copy: no session goes to sign-in, another project's member gets 404", async () => {
    expect((await get(thumb, "")).status).toBe(302);
    const foreign = await get(thumb, stranger);
    expect(foreign.status).toBe(404);
    expect(Buffer.from(await foreign.arrayBuffer()).includes(Buffer.from("RIFF"))).toBe(false);
  });

  it("reads a download from the store every time, where its limits hold", async () => {
    expect((await get(`${original}?download`)).status).toBe(200);
    expect((await get(original)).status).toBe(200); // the original shown inline: kept when small enough
    rmSync(originalFile);
    expect((await get(`${original}?download`)).status).toBe(404);
  });
});
