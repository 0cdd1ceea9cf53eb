import { expect, test } from "@playwright/test";
import { mediaUrl } from "../../app/lib/media";
import { e2eImage, signInWithPassword, userFor } from "./support";

test("stored images are served to members only, cached for good, with validators", async ({ page, browser }, info) => {
  const image = e2eImage();
  const thumb = mediaUrl(image.id, image.thumb_key);
  const original = mediaUrl(image.id, image.storage_key);

  const anonymous = await page.request.get(thumb, { maxRedirects: 0 });
  expect(anonymous.status()).toBe(302);
  expect(anonymous.headers().location).toMatch(/^\/login/);

  await signInWithPassword(page, userFor(info, "media"));
  await expect(page).toHaveURL(/\/dashboard$/);
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
  const outsider = await browser.newPage();
  await signInWithPassword(outsider, userFor(info, "outsider"));
  await expect(outsider).toHaveURL(/\/dashboard$/);
  expect((await outsider.request.get(thumb)).status()).toBe(404);
  await outsider.close();
});
