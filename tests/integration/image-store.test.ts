import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import { readdirSync, statSync } from "node:fs";
import path from "node:path";
import sharp from "sharp";
import { ImageRejected, storeImageFile } from "~/services/image-files.server";
import { sha256 } from "~/lib/crypto.server";
import { gridThumbKey } from "~/lib/media";
import { ObjectTooLarge } from "~/services/storage-contract";
import { objectKey, readObject, storage } from "~/services/storage.server";
import { freshDatabase, type TestDatabase } from "../helpers/db";
import { gif, jpeg, png, pngBomb, tiff, webp } from "../helpers/images";

function countObjects(dir: string): number {
  try {
    return readdirSync(dir).reduce((n, f) => {
      const p = path.join(dir, f);
      return n + (statSync(p).isDirectory() ? countObjects(p) : 1);
    }, 0);
  } catch {
    return 0;
  }
}

describe("image store", () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await freshDatabase("sqlite", { MAX_IMAGE_BYTES: String(2 * 1024 * 1024) });
  });
  afterAll(() => t.drop());
  const objects = () => countObjects(path.join(t.dataDir, "objects"));

  it("stores the original and WebP derivatives under content-addressed keys", async () => {
    const buf = await jpeg(2000, 1000);
    const stored = await storeImageFile(buf);
    expect(stored).toMatchObject({ mimeType: "image/jpeg", width: 2000, height: 1000, sizeBytes: buf.length });
    expect(stored.storageKey).toMatch(new RegExp(`^originals/../../${stored.checksum}\\.jpg$`));
    const thumb = await storage().get(stored.thumbKey);
    const chunks: Buffer[] = [];
    for await (const c of thumb!.stream) chunks.push(c as Buffer);
    const meta = await sharp(Buffer.concat(chunks)).metadata();
    expect(meta).toMatchObject({ format: "webp", width: 480, height: 240 });
    // The grid's own, a quarter of the pixels, named after the thumbnail.
    const grid = await readObject(storage(), gridThumbKey(stored.thumbKey), 1024 * 1024);
    expect(await sharp(grid!.bytes).metadata()).toMatchObject({ format: "webp", width: 240, height: 120 });
    // The same content is stored once.
    const again = await storeImageFile(buf);
    expect(again.storageKey).toBe(stored.storageKey);
  });

  it("accepts every allowed type", async () => {
    for (const make of [png, webp, gif, tiff]) await expect(storeImageFile(await make())).resolves.toBeTruthy();
  });

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
    ["text", () => Buffer.from("hello, this is not an image at all"), /not a supported image/],
    ["a zero-byte file", () => Buffer.alloc(0), /empty/],
    ["a truncated JPEG", async () => (await jpeg(800, 600, "#ff8800")).subarray(0, 1500), /damaged/],
    [
      "a JPEG/HTML polyglot",
      async () =>
        Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.from("<html><script>alert(1)</script></html>".padEnd(400, " "))]),
      /HTML or script/,
    ],
    ["a 30000×30000 PNG bomb", () => pngBomb(), /too large/],
    [
      "a file over the size limit",
      () =>
        sharp({ create: { width: 1500, height: 1500, channels: 3, background: "#000", noise: { type: "gaussian", mean: 128, sigma: 60 } } })
          .png()
          .toBuffer(),
      /larger than 2 MB/,
    ],
  ];
  it.each(bad)("refuses %s with a clear message and stores nothing", async (_name, make, message) => {
    const before = objects();
    const buf = await make();
    if (_name.includes("bomb")) expect(buf.length).toBeLessThan(1024 * 1024);
    const error = await storeImageFile(buf).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ImageRejected);
    expect((error as Error).message).toMatch(message);
    expect(objects()).toBe(before);
  });

  it("reads a whole object through the file driver: its bytes, null when there is none, refused past the limit", async () => {
    const body = await jpeg(1200, 900);
    const key = objectKey("originals", sha256(body), "jpg");
    await storage().put(key, body);
    const read = await readObject(storage(), key, body.length);
    expect(read!.bytes.equals(body)).toBe(true);
    expect(await readObject(storage(), objectKey("originals", "0".repeat(64), "jpg"), body.length)).toBeNull();
    await expect(readObject(storage(), key, body.length - 1)).rejects.toBeInstanceOf(ObjectTooLarge);
    await expect(readObject(storage(), "../../etc/passwd", body.length)).rejects.toThrow(/Invalid storage key/);
  });

  it("streams a body of many chunks to the file driver whole, and keeps nothing of one past its limit", async () => {
    const body = randomBytes(3.5 * 1024 * 1024);
    const chunks = async function* () {
      for (let at = 0; at < body.length; at += 64 * 1024) yield body.subarray(at, at + 64 * 1024);
    };
    const key = objectKey("uploads", sha256(body), "upload");
    await storage().putStream(key, chunks(), body.length);
    expect((await readObject(storage(), key, body.length))!.bytes.equals(body)).toBe(true);
    const refused = objectKey("uploads", sha256(Buffer.from("refused")), "upload");
    await expect(storage().putStream(refused, chunks(), body.length - 1)).rejects.toBeInstanceOf(ObjectTooLarge);
    expect(await storage().size(refused)).toBeNull();
    expect(readdirSync(path.join(t.dataDir, "objects", ".tmp"))).toEqual([]);
  });
});
