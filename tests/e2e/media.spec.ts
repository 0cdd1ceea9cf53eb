import { mediaUrl } from "~/lib/media";
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
