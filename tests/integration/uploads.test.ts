import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import sharp from "sharp";
import { db } from "~/db/connection.server";
import { loadConfig, setConfig, config } from "~/config.server";
import { NotFoundError } from "~/lib/errors";
import { gridThumbKey } from "~/lib/media";
import type { Actor } from "~/models/actor";
import { StaleEdit, type MetadataChange } from "~/models/image-edits.server";
import { getImageDetail } from "~/models/images.server";
import { imageScope, projectScope } from "~/models/scope.server";
import { MAX_PENDING_UPLOADS, TooManyUploads } from "~/models/uploads.server";
import { ImageRejected } from "~/services/image-files.server";
import { registerUpload, removeImage, saveImageEdit, signUpload, sweepExpiredUploads } from "~/services/ingest.server";
import { jobRegistry } from "~/services/job-registry.server";
import { runOnce } from "~/services/jobs.server";
import type { Storage } from "~/services/storage-contract";
import type { S3Storage } from "~/services/storage-s3.server";
import { readObject, storage, setStorage } from "~/services/storage.server";
import { action as putAction } from "~/routes/_app+/_upload+/storage.upload";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";
import { makeProject, makeUser } from "../helpers/fixtures";
import { jpeg, pngBomb } from "../helpers/images";
import { startS3 } from "../helpers/s3";

/** Step 2 as a browser does it: a PUT to the signed URL (the app's own route, or the S3 server over HTTP). */
async function put(uploadUrl: string, body: Buffer): Promise<number> {
  if (uploadUrl.startsWith("/")) {
    const request = new Request(`http://koala.test${uploadUrl}`, {
      method: "PUT",
      body: new Uint8Array(body),
      headers: { "Content-Length": String(body.length) },
    });
    const response = await putAction({ request, params: {}, context: { nonce: "", clientIp: "127.0.0.1" } });
    return response.status;
  }
  return (await fetch(uploadUrl, { method: "PUT", body: new Uint8Array(body) })).status;
}

const META = { title: "Shelf", description: "", keywords: ["shelf"], ocrText: "", originalName: "" };

/** A valid JPEG that is also an HTML page: the markup sits in a comment segment right after SOI. */
async function polyglot() {
  const image = await jpeg(200, 150);
  const html = Buffer.from("<html><body><script>alert(document.cookie)</script></body></html>");
  const segment = Buffer.concat([Buffer.from([0xff, 0xfe, (html.length + 2) >> 8, (html.length + 2) & 0xff]), html]);
  return Buffer.concat([image.subarray(0, 2), segment, image.subarray(2)]);
}

const drivers = ["file", "s3"] as const;
let s3: Awaited<ReturnType<typeof startS3>>;
beforeAll(async () => {
  s3 = await startS3();
});
afterAll(() => s3.stop());

describe.each(dialects.flatMap((d) => drivers.map((s) => [d, s] as const)))("upload pipeline (%s, %s storage)", (dialect, driver) => {
  let t: TestDatabase;
  let store: Storage;
  let alice: { actor: Actor };
  let bob: { actor: Actor };
  let projectId: number;
  let otherProjectId: number;

  beforeEach(async () => {
    t = await freshDatabase(dialect, { MAX_IMAGE_BYTES: String(3 * 1024 * 1024), ...(driver === "s3" ? s3.env : {}) });
    store = driver === "s3" ? s3.storage() : storage();
    setStorage(store);
    alice = await makeUser();
    bob = await makeUser();
    projectId = (await makeProject([{ actor: alice.actor }, { actor: bob.actor }])).id;
    otherProjectId = (await makeProject([{ actor: bob.actor }])).id;
  });
  afterEach(() => t.drop());

  const objectsOf = async (imageId: number) => {
    const row = await db()
      .selectFrom("images")
      .select(["storage_key", "thumb_key", "preview_key"])
      .where("id", "=", imageId)
      .executeTakeFirstOrThrow();
    // The grid thumbnail is named by the thumbnail's key (no column of its own): stored, kept and purged with it.
    return [row.storage_key, row.thumb_key, row.preview_key, gridThumbKey(row.thumb_key)];
  };
  const imageCount = async () =>
    Number(
      (
        await db()
          .selectFrom("images")
          .select((eb) => eb.fn.countAll().as("n"))
          .executeTakeFirstOrThrow()
      ).n,
    );

  const scopeOf = (actor: Actor, id = projectId) => projectScope(actor, id);
  const detailOf = async (actor: Actor, id: number) => {
    const { scope, image } = await imageScope(actor, id);
    return getImageDetail(scope, image);
  };
  const saveAs = async (actor: Actor, id: number, change: MetadataChange, rotateBy: number, version?: number) => {
    const { scope, image } = await imageScope(actor, id);
    return saveImageEdit(scope, image, change, rotateBy, version);
  };
  const removeAs = async (actor: Actor, id: number) => {
    const { scope, image } = await imageScope(actor, id);
    return removeImage(scope, image);
  };

  async function upload(buf: Buffer, fileName = "shelf.jpg", actor = alice.actor) {
    const { uploadUrl, key } = await signUpload(await scopeOf(actor), fileName);
    expect(await put(uploadUrl, buf)).toBe(200);
    return key;
  }

  it("signs, receives and registers an image with its first version, objects and no leftover upload", async () => {
    const buf = await jpeg(1200, 800);
    const key = await upload(buf, "../../etc/Shelf in Leeds.jpg");
    expect(key).toMatch(/^uploads\/..\/..\/[0-9a-f]{64}\.upload$/);
    const id = await registerUpload(await scopeOf(alice.actor), key, { ...META, originalName: "" });
    const detail = await detailOf(alice.actor, id);
    expect(detail.image).toMatchObject({
      width: 1200,
      height: 800,
      mime_type: "image/jpeg",
      original_name: "Shelf in Leeds.jpg",
      version: 1,
      keywords: ["shelf"],
    });
    expect(detail.versions).toHaveLength(1);
    for (const k of await objectsOf(id)) expect(await store.size(k)).toBeGreaterThan(0);
    expect(await store.size(key)).toBeNull();
    // Registering the same key again answers with the same image, and adds nothing.
    expect(await registerUpload(await scopeOf(alice.actor), key, META)).toBe(id);
    expect(await imageCount()).toBe(1);
  });

  it(`signs an announced size into the upload URL, which then refuses ${driver === "s3" ? "any other length" : "a longer file"}`, async () => {
    const body = await jpeg(300, 200);
    const { uploadUrl, key } = await signUpload(await scopeOf(alice.actor), "exact.jpg", body.length);
    if (driver === "s3") {
      // Checked by the S3 stand-in's SigV4 check (tests/helpers/s3.ts): the length is a signed header.
      expect(new URL(uploadUrl).searchParams.get("X-Amz-SignedHeaders")).toBe("content-length;host");
      expect(await put(uploadUrl, body.subarray(0, body.length - 1))).toBe(403);
    } else expect(new URL(uploadUrl, "http://koala.test").searchParams.get("max")).toBe(String(body.length));
    expect(await put(uploadUrl, Buffer.concat([body, Buffer.from([0])]))).toBe(driver === "s3" ? 403 : 413);
    expect(await store.size(key)).toBeNull();
    expect(await put(uploadUrl, body)).toBe(200);
    expect(await registerUpload(await scopeOf(alice.actor), key, META)).toBeGreaterThan(0);
  });

  it("gives one image when the same key is registered twice at once", async () => {
    const key = await upload(await jpeg(300, 200));
    const [a, b] = await Promise.all([
      registerUpload(await scopeOf(alice.actor), key, META),
      registerUpload(await scopeOf(alice.actor), key, META),
    ]);
    expect(a).toBe(b);
    expect(await imageCount()).toBe(1);
  });

  /** The requests the S3 front answered for `key` while `work` ran: [method, copy source, status]. */
  async function s3RequestsFor(key: () => Promise<string>, work: () => Promise<unknown>) {
    const from = s3.requests.length;
    await work();
    const path = `/${s3.bucket}/${await key()}`;
    return s3.requests
      .slice(from)
      .filter((r) => r.path === path)
      .map((r) => [r.method, r.copySource, r.status]);
  }

  // Each dialect's run shares the bucket: a colour of its own keeps its original from being found already stored.
  const unseen = () => jpeg(640, 480, `#${randomBytes(3).toString("hex")}`);

  // The bucket copy: S3 only (the file store keeps its PUT), so these exist on the S3 runs alone.
  if (driver === "s3") {
    it("stores the original by a copy inside the bucket, not a second PUT of its bytes", async () => {
      const buf = await unseen();
      // A presigned PUT does not sign Content-Type: the uploader's choice must not reach the original.
      const { uploadUrl, key } = await signUpload(await scopeOf(alice.actor), "shelf.jpg");
      expect((await fetch(uploadUrl, { method: "PUT", body: new Uint8Array(buf), headers: { "Content-Type": "text/html" } })).status).toBe(
        200,
      );
      let id = 0;
      const sent = await s3RequestsFor(
        async () => (await objectsOf(id))[0]!,
        async () => (id = await registerUpload(await scopeOf(alice.actor), key, META)),
      );
      // A HEAD (is it stored already?), then the copy from the upload key; no PUT of the bytes.
      expect(sent).toEqual([
        ["HEAD", undefined, 404],
        ["PUT", `${s3.bucket}/${key}`, 200],
      ]);
      const original = (await objectsOf(id))[0]!;
      expect((await readObject(store, original, buf.length))!.bytes.equals(buf)).toBe(true);
      const served = await fetch(`${s3.endpoint}/${s3.bucket}/${original}`);
      await served.arrayBuffer();
      expect(served.headers.get("content-type")).not.toMatch(/html/);
      expect(await store.size(key)).toBeNull();
    });

    // s3rver copies whatever its copy's condition says; the S3 front of these tests (tests/helpers/s3.ts) answers
    // 412 for an `x-amz-copy-source-if-match` that no longer holds, as S3 does, so the driver's real copy is refused.
    it("stores the checked bytes when the upload URL rewrote the object between the read and the copy", async () => {
      const buf = await unseen();
      const { uploadUrl, key } = await signUpload(await scopeOf(alice.actor), "shelf.jpg");
      expect(await put(uploadUrl, buf)).toBe(200);
      const s3Store = store as S3Storage;
      const copy = s3Store.copy.bind(s3Store);
      s3Store.copy = async (from, to, opts) => {
        expect(await put(uploadUrl, await polyglot())).toBe(200);
        return copy(from, to, opts);
      };
      let id = 0;
      const sent = await s3RequestsFor(
        async () => (await objectsOf(id))[0]!,
        async () => (id = await registerUpload(await scopeOf(alice.actor), key, META)),
      );
      // The copy is refused (412) and the bytes that were checked are PUT instead.
      expect(sent).toEqual([
        ["HEAD", undefined, 404],
        ["PUT", `${s3.bucket}/${key}`, 412],
        ["PUT", undefined, 200],
      ]);
      expect((await readObject(store, (await objectsOf(id))[0]!, buf.length))!.bytes.equals(buf)).toBe(true);
      expect(await store.size(key)).toBeNull();
    });
  }

  const bad: [string, () => Promise<Buffer> | Buffer, RegExp][] = [
    [
      "an SVG with a script",
      () => Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'),
      /not a supported image/,
    ],
    [
      "an SVG with an external reference",
      () => Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><image href="https://evil.example/x.png"/></svg>'),
      /not a supported image/,
    ],
    ["HTML renamed to .jpg", () => Buffer.from("<!doctype html><html><body>hi</body></html>"), /not a supported image/],
    ["text renamed to .jpg", () => Buffer.from("just some words, not an image at all"), /not a supported image/],
    ["a JPEG/HTML polyglot", polyglot, /HTML or script/],
    ["a 30000×30000 PNG of a few hundred kilobytes", () => pngBomb(), /too large/],
    ["a truncated JPEG", async () => (await jpeg(800, 600, "#ff8800")).subarray(0, 1500), /damaged/],
    ["a zero-byte file", () => Buffer.alloc(0), /empty/],
  ];
  it.each(bad)("refuses %s at registration: a clear message, the object deleted, nothing inserted", async (_name, make, message) => {
    const key = await upload(await make(), "photo.jpg");
    const error = await registerUpload(await scopeOf(alice.actor), key, META).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ImageRejected);
    expect((error as Error).message).toMatch(message);
    expect(await imageCount()).toBe(0);
    expect(await store.size(key)).toBeNull();
  });

  it("refuses a file over the size limit (the app's PUT stops it; S3 cannot, so registration does)", async () => {
    const big = Buffer.alloc(config().maxImageBytes + 1, 1);
    const { uploadUrl, key } = await signUpload(await scopeOf(alice.actor), "big.jpg");
    const status = await put(uploadUrl, big);
    if (driver === "file") expect(status).toBe(413);
    else expect(status).toBe(200);
    const error = await registerUpload(await scopeOf(alice.actor), key, META).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ImageRejected);
    expect((error as Error).message).toMatch(/larger than 3 MB|not uploaded/);
    expect(await store.size(key)).toBeNull();
    expect(await imageCount()).toBe(0);
  });

  it("answers 'not found' for another user's pending key, another project, or a project the user is not in", async () => {
    const key = await upload(await jpeg());
    await expect(registerUpload(await scopeOf(bob.actor), key, META)).rejects.toBeInstanceOf(NotFoundError);
    // Alice is not a member of the other project: its scope does not resolve, so nothing can be signed or registered there.
    await expect(scopeOf(alice.actor, otherProjectId)).rejects.toBeInstanceOf(NotFoundError);
    await expect(registerUpload(await scopeOf(alice.actor), `uploads/22/22/${"2".repeat(64)}.upload`, META)).rejects.toBeInstanceOf(
      NotFoundError,
    );
    expect(await imageCount()).toBe(0);
  });

  it("rotates from the original into a new version, keeping the original and the history", async () => {
    const buf = await jpeg(400, 200);
    const id = await registerUpload(await scopeOf(alice.actor), await upload(buf), META);
    const [original, thumb1] = await objectsOf(id);
    const v2 = await saveAs(alice.actor, id, { title: "Turned", description: "", keywords: ["shelf", "promo"], ocrText: "" }, 90, 1);
    expect(v2).toBe(2);
    const detail = await detailOf(alice.actor, id);
    expect(detail.image).toMatchObject({ version: 2, rotation: 90, title: "Turned", storage_key: original });
    expect(detail.image.thumb_key).not.toBe(thumb1);
    expect(detail.versions.map((v) => v.version)).toEqual([2, 1]);
    expect(detail.versions[0]!.changes).toEqual(["title", "keywords", "rotated to 90°"]);
    const thumb = await store.get(detail.image.thumb_key);
    const chunks: Buffer[] = [];
    for await (const c of thumb!.stream) chunks.push(c as Buffer);
    expect(await sharp(Buffer.concat(chunks)).metadata()).toMatchObject({ width: 200, height: 400 });
    expect(await store.size(original!)).toBe(buf.length);
    // Nothing changed: no version. A form loaded before the last save: refused, not overwritten.
    expect(await saveAs(alice.actor, id, { title: "Turned", description: "", keywords: ["shelf", "promo"], ocrText: "" }, 0, 2)).toBeNull();
    await expect(saveAs(bob.actor, id, { title: "Stale", description: "", keywords: [], ocrText: "" }, 0, 1)).rejects.toBeInstanceOf(
      StaleEdit,
    );
  });

  it("deletes the row first and its objects in a job, keeping objects another image still uses", async () => {
    const buf = await jpeg(320, 240);
    const first = await registerUpload(await scopeOf(alice.actor), await upload(buf), META);
    const second = await registerUpload(await scopeOf(alice.actor), await upload(buf), META);
    await saveAs(alice.actor, first, { ...META, title: "rot" }, 180, 1);
    const firstKeys = [...(await objectsOf(first)), ...(await objectsOf(second))];
    await removeAs(alice.actor, first);
    await expect(detailOf(alice.actor, first)).rejects.toBeInstanceOf(NotFoundError);
    while (await runOnce(jobRegistry, "test"));
    // The shared original and unrotated derivatives stay for the second image; the rotated ones went.
    for (const k of await objectsOf(second)) expect(await store.size(k)).not.toBeNull();
    const rotated = firstKeys.filter((k) => k.includes("-r180"));
    expect(rotated).toHaveLength(3);
    for (const k of rotated) expect(await store.size(k)).toBeNull();
    await removeAs(alice.actor, second);
    while (await runOnce(jobRegistry, "test"));
    for (const k of firstKeys) expect(await store.size(k)).toBeNull();
    await expect(removeAs(alice.actor, second)).rejects.toBeInstanceOf(NotFoundError);
  });

  it("caps the uploads one user may have in flight", async () => {
    const now = Date.now();
    const row = (i: number) => ({
      key: `uploads/aa/aa/${String(i).padStart(64, "0")}.upload`,
      user_id: alice.actor.id,
      project_id: projectId,
      file_name: "x.jpg",
      created_at: now,
      expires_at: now + 60_000,
      image_id: null,
    });
    // In chunks of 100: SQLite's bound-parameter limit.
    for (let i = 0; i < MAX_PENDING_UPLOADS; i += 100)
      await db()
        .insertInto("pending_uploads")
        .values(Array.from({ length: 100 }, (_, k) => row(i + k)))
        .execute();
    await expect(signUpload(await scopeOf(alice.actor), "one-too-many.jpg")).rejects.toBeInstanceOf(TooManyUploads);
    // Someone else is not held up by it.
    await expect(signUpload(await scopeOf(bob.actor), "fine.jpg")).resolves.toHaveProperty("key");
  });

  it("sweeps the objects and records of expired uploads that were never registered", async () => {
    const key = await upload(await jpeg());
    expect(await store.size(key)).not.toBeNull();
    expect(await sweepExpiredUploads(Date.now() + 2 * 3_600_000)).toBe(1);
    expect(await store.size(key)).toBeNull();
    await expect(registerUpload(await scopeOf(alice.actor), key, META)).rejects.toBeInstanceOf(NotFoundError);
  });
});

// With S3 the bucket checks its own presigned URLs (in these tests the stand-in in tests/helpers/s3.ts does, and
// the S3 runs above upload through it); whatever reaches a bucket, only a key with the user's own pending upload
// can be registered (above).
describe("the app's signed upload URLs (filesystem storage)", () => {
  let t: TestDatabase;
  let alice: { actor: Actor };
  let projectId: number;
  let store: Storage;
  beforeAll(async () => {
    t = await freshDatabase("sqlite");
    store = storage();
    alice = await makeUser();
    projectId = (await makeProject([{ actor: alice.actor }])).id;
  });
  afterAll(() => t.drop());
  const scopeOf = (actor: Actor) => projectScope(actor, projectId);

  it("refuses an empty file when it is signed, before any byte is sent", async () => {
    await expect(signUpload(await scopeOf(alice.actor), "empty.jpg", 0)).rejects.toThrow("The file is empty.");
  });

  it("signs the file's size when it is given, and refuses an oversized file before any byte is sent", async () => {
    await expect(signUpload(await scopeOf(alice.actor), "huge.jpg", config().maxImageBytes + 1)).rejects.toThrow(/larger than/);
    const { uploadUrl } = await signUpload(await scopeOf(alice.actor), "exact.jpg", 1234);
    expect(new URL(uploadUrl, "http://koala.test").searchParams.get("max")).toBe("1234");
    expect(await put(uploadUrl, Buffer.alloc(1235, 1))).toBe(413);
  });

  it("refuses an upload URL whose signature, key, size limit or expiry was changed, or that has expired", async () => {
    const { uploadUrl } = await signUpload(await scopeOf(alice.actor), "a.jpg");
    const url = new URL(uploadUrl, "http://koala.test");
    const pathOf = (u: URL) => `${u.pathname}${u.search}`;
    const forged = new URL(url);
    forged.searchParams.set("sig", `${url.searchParams.get("sig")!.slice(0, -2)}aa`);
    expect(await put(pathOf(forged), await jpeg())).toBe(403);
    for (const [name, value] of [
      ["key", `uploads/00/00/${"0".repeat(64)}.upload`],
      ["max", "999999999"],
      ["exp", "9999999999"],
    ] as const) {
      const changed = new URL(url);
      changed.searchParams.set(name, value);
      expect(await put(pathOf(changed), await jpeg())).toBe(403);
    }
    const expired = await store.signUpload(`uploads/11/11/${"1".repeat(64)}.upload`, { maxBytes: 100, expiresInSeconds: -1 });
    expect(await put(expired, Buffer.from("x"))).toBe(403);
  });
});

describe("storage configuration", () => {
  it("chooses the S3 driver when S3_BUCKET is set", async () => {
    setConfig(loadConfig({ DATA_DIR: "/tmp/koala-config-test", KOALA_ENV: "development", ...s3.env }));
    setStorage(undefined);
    expect(storage().constructor.name).toBe("S3Storage");
    setStorage(undefined);
  });
});
