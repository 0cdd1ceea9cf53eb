import sharp from "sharp";
import { afterEach, describe, expect, it } from "vitest";
import { db } from "~/db/connection.server";
import { storage } from "~/services/storage.server";
import { signIn } from "~/sessions.server";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";
import { makeProject, makeUser } from "../helpers/fixtures";
import { freePort, startServer as startServerProcess, type RunningServer } from "../helpers/server";

/**
 * The built server is killed with SIGKILL in the middle of a burst of uploads. After a restart every image the
 * server acknowledged (answered with an insertID) must be whole, and no image row may lack one of its objects.
 * Needs the production build (npm test builds before it runs).
 */
// One secret for the test (which signs the session cookie) and the server (which checks it).
const SESSION_SECRET = "crash-test-secret-0123456789abcdef0123456789";

const startServer = (t: TestDatabase, port: number) =>
  startServerProcess({ DATA_DIR: t.dataDir, SESSION_SECRET, DATABASE_URL: t.url, LOG_LEVEL: "error" }, port);

const distinctJpeg = (n: number) =>
  sharp({ create: { width: 2400, height: 1800, channels: 3, background: { r: (n * 37) % 256, g: (n * 91) % 256, b: (n * 53) % 256 } } })
    .composite([{ input: Buffer.from(`<svg width="2400" height="1800"><text x="100" y="900" font-size="400">${n}</text></svg>`) }])
    .jpeg({ quality: 92 })
    .toBuffer();

describe.each(dialects)("a crash in the middle of an upload burst (%s)", (dialect) => {
  let t: TestDatabase;
  let server: RunningServer | undefined;
  afterEach(async () => {
    server?.child.kill("SIGKILL");
    await t.drop();
  });

  it("keeps every acknowledged image whole, and leaves no row without its objects", { timeout: 120_000 }, async () => {
    t = await freshDatabase(dialect, { SESSION_SECRET });
    const { user, actor } = await makeUser();
    const project = await makeProject([{ actor }]);
    const signedIn = await signIn(
      new Request("http://127.0.0.1/login"),
      { ip: "127.0.0.1", userAgent: "crash test" },
      user.id,
      "/",
      "test",
    );
    const cookie = signedIn.headers.get("Set-Cookie")!.split(";")[0]!;
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    server = await startServer(t, port);

    const files = await Promise.all(Array.from({ length: 24 }, (_, n) => distinctJpeg(n)));
    const acknowledged: number[] = [];
    const post = (url: string, body: unknown) =>
      fetch(`${base}${url}`, {
        method: "POST",
        headers: { Cookie: cookie, "Content-Type": "application/json" },
        body: JSON.stringify(body),
      });
    async function uploadOne(n: number) {
      const signed = (await (await post("/api/uploads", { clientID: project.id, fileName: `burst-${n}.jpg` })).json()) as {
        uploadUrl: string;
        key: string;
      };
      const put = await fetch(new URL(signed.uploadUrl, base), { method: "PUT", body: new Uint8Array(files[n]!) });
      if (!put.ok) throw new Error(`PUT ${put.status}`);
      const registered = await post("/api/images", { clientID: project.id, newImage: { imgURL: signed.key, imgTitle: `burst ${n}` } });
      if (registered.status !== 201) throw new Error(`register ${registered.status}`);
      acknowledged.push(((await registered.json()) as { insertID: number }).insertID);
      if (acknowledged.length === 6) server!.child.kill("SIGKILL");
    }
    // Six at a time; the server dies once six are acknowledged, with others mid-PUT or mid-registration.
    const queue = files.map((_, n) => n);
    await Promise.all(
      Array.from({ length: 6 }, async () => {
        for (let n = queue.shift(); n !== undefined; n = queue.shift()) await uploadOne(n).catch(() => undefined);
      }),
    );
    expect(acknowledged.length).toBeGreaterThanOrEqual(6);
    expect(acknowledged.length).toBeLessThan(files.length);

    server = await startServer(t, port);
    const rows = await db().selectFrom("images").select(["id", "storage_key", "thumb_key", "preview_key", "checksum"]).execute();
    const versions = await db().selectFrom("image_versions").select(["image_id", "storage_key", "thumb_key", "preview_key"]).execute();
    expect(rows.map((r) => r.id)).toEqual(expect.arrayContaining(acknowledged));
    for (const row of [...rows, ...versions])
      for (const key of [row.storage_key, row.thumb_key, row.preview_key]) expect(await storage().size(key), key).toBeGreaterThan(0);
    for (const row of rows) {
      const original = await storage().get(row.storage_key);
      const chunks: Buffer[] = [];
      for await (const c of original!.stream) chunks.push(c as Buffer);
      expect(await sharp(Buffer.concat(chunks)).metadata()).toMatchObject({ width: 2400, height: 1800 });
    }
    // The restarted server serves them, and takes new uploads.
    const thumb = rows.find((r) => r.id === acknowledged[0])!;
    expect((await fetch(`${base}/media/${thumb.id}/${thumb.thumb_key.replaceAll("/", "~")}`, { headers: { Cookie: cookie } })).status).toBe(
      200,
    );
    const before = acknowledged.length;
    await uploadOne(0);
    expect(acknowledged.length).toBe(before + 1);
  });
});
