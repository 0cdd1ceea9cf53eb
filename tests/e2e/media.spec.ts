import sharp from "sharp";
import { gridThumbKey, mediaUrl } from "~/lib/media";
import { expect, test } from "./fixtures";
import { e2eImage, hasJs } from "./support";

test(
  "stored images are served to members only, cached for good, with validators",
  { tag: "@core" },
  async ({ page, browser, signIn, db, server }, info) => {
    const image = await e2eImage(db);
    const thumb = mediaUrl(image.id, image.thumb_key);
    const original = mediaUrl(image.id, image.storage_key);

    const anonymous = await page.request.get(thumb, { maxRedirects: 0 });
    expect(anonymous.status()).toBe(302);
    expect(anonymous.headers().location).toMatch(/^\/login/);

    await signIn("media");
    const res = await page.request.get(thumb);
    expect(res.status()).toBe(200);
    expect(res.headers()["content-type"]).toBe("image/webp");
    expect(res.headers()["cache-control"]).toBe("private, max-age=31536000, immutable");
    const etag = res.headers().etag!;
    expect(etag).toBeTruthy();
    expect((await page.request.get(thumb, { headers: { "If-None-Match": etag } })).status()).toBe(304);
    const full = await page.request.get(original);
    expect(full.headers()["content-type"]).toBe("image/jpeg");
    expect((await full.body()).subarray(0, 3)).toEqual(Buffer.from([0xff, 0xd8, 0xff]));
    // A key that is not this image's, and a path-traversal attempt, are not found.
    expect((await page.request.get(mediaUrl(image.id, image.thumb_key.replace(/[0-9a-f]{8}\./, "00000000.")))).status()).toBe(404);
    expect((await page.request.get(`/media/${image.id}/..~..~koala.sqlite`)).status()).toBe(404);

    // Someone outside the project gets 404, never the bytes.
    const outsider = await browser.newContext({ baseURL: server.baseURL, javaScriptEnabled: hasJs(info) });
    await signIn("outsider", outsider);
    expect((await outsider.request.get(thumb)).status()).toBe(404);
    await outsider.close();
  },
);

test(
  "a card draws the 240-pixel grid thumbnail on a screen of one pixel per CSS pixel and the 480-pixel one on a denser screen",
  { tag: "@core" },
  async ({ browser, signIn, db, server }, info) => {
    const image = await e2eImage(db);
    const { project_id: projectId } = await db
      .selectFrom("images")
      .select("project_id")
      .where("id", "=", image.id)
      .executeTakeFirstOrThrow();
    for (const [scale, width, key] of [
      [1, 240, gridThumbKey(image.thumb_key)],
      [2, 480, image.thumb_key],
    ] as const) {
      const context = await browser.newContext({
        baseURL: server.baseURL,
        javaScriptEnabled: hasJs(info),
        deviceScaleFactor: scale,
        viewport: { width: 1280, height: 800 },
      });
      await signIn("media", context);
      const page = await context.newPage();
      await page.goto(`/client/${projectId}`);
      const thumb = page.locator(`article[data-image-id="${image.id}"] img.image-card-thumb`);
      // The file the browser chose, once loaded (naturalWidth is the drawn width here, corrected by the srcset's
      // descriptor, so the file's own width is read from the file).
      await expect
        .poll(
          // Looked up on every try: with JavaScript the server's cards are replaced by the virtual grid's.
          () =>
            thumb.evaluate((img: HTMLImageElement) => {
              img.scrollIntoView({ block: "center" });
              return img.complete && img.naturalWidth ? new URL(img.currentSrc).pathname : "";
            }),
          {
            message: `at ${scale}×`,
          },
        )
        .toBe(mediaUrl(image.id, key));
      const file = await context.request.get(mediaUrl(image.id, key));
      expect((await sharp(await file.body()).metadata()).width).toBe(width);
      await context.close();
    }
  },
);
