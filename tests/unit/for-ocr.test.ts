import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { forOcr } from "~/services/ocr.server";

/** The PGM forOcr should make of a picture: its luma (Rec. 601 on the encoded values), or its grey channel. */
async function expected(picture: Buffer): Promise<Buffer> {
  const { data, info } = await sharp(picture).raw().toBuffer({ resolveWithObject: true });
  const c = info.channels;
  const grey = Buffer.alloc(info.width * info.height);
  for (let p = 0; p < grey.length; p++) {
    const i = p * c;
    grey[p] = c < 3 ? data[i]! : (data[i]! * 77 + data[i + 1]! * 150 + data[i + 2]! * 29 + 128) >> 8;
  }
  return Buffer.concat([Buffer.from(`P5\n${info.width} ${info.height}\n255\n`), grey]);
}

/** A PNG of random pixels with `channels` channels (1 grey, 2 grey and alpha, 3 colour, 4 colour and alpha). */
function randomPicture(width: number, height: number, channels: 1 | 2 | 3 | 4) {
  const pixels = Buffer.alloc(width * height * channels);
  for (let i = 0; i < pixels.length; i++) pixels[i] = (i * 7919 + (i >> 3) * 104729) % 251;
  return sharp(pixels, { raw: { width, height, channels } }).png().toBuffer();
}

describe("forOcr: the picture as tesseract is given it", () => {
  for (const channels of [1, 2, 3, 4] as const)
    for (const [width, height] of [
      [1, 1],
      [3, 3],
      [5, 2],
      [640, 480],
    ] as const)
      it(`is the luma (or grey) of every pixel after a PGM header: ${channels} channel(s), ${width}×${height}`, async () => {
        const picture = await randomPicture(width, height, channels);
        expect(Buffer.compare(await forOcr(picture), await expected(picture))).toBe(0);
      });

  it("refuses a picture that will not decode, for good", async () => {
    await expect(forOcr(Buffer.from("not a picture"))).rejects.toMatchObject({ name: "JobCannotSucceed" });
  });
});
