import { readFileSync } from "node:fs";
import path from "node:path";
import { setTimeout } from "node:timers/promises";
import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { createOcrPool } from "~/services/ocr-pool.server";
import { forOcr } from "~/services/ocr.server";

// clean-04.jpg says "Urban Roast / Sparkling water 2.51 / SAVE 30% / TOTAL 20.54 EUR" (tests/fixtures/ocr/truth.json).
const RECEIPT = path.join(__dirname, "../fixtures/ocr/clean-04.jpg");

describe("the OCR pool", () => {
  it("letting it go fails a reading still on it at once (tesseract.js would leave it hanging), and the next reading starts it afresh", async () => {
    const pool = createOcrPool({ concurrency: 1, languages: ["eng"] });
    const picture = await forOcr(readFileSync(RECEIPT));
    // Grain over a large picture: a reading of many seconds.
    const grain = await forOcr(
      await sharp({
        create: { width: 2400, height: 2400, channels: 3, background: "#888", noise: { type: "gaussian", mean: 128, sigma: 60 } },
      })
        .png()
        .toBuffer(),
    );
    try {
      const first = pool.read(grain);
      first.catch(() => {});
      // The pool starts its worker, then reads: let go while it does either.
      await setTimeout(1500);
      const letGo = Date.now();
      await pool.close();
      await expect(first).rejects.toThrow("let go during the reading");
      expect(Date.now() - letGo).toBeLessThan(10_000);
      const lines = await pool.read(picture);
      expect(lines.map((l) => l.text).join("\n")).toContain("Urban Roast");
    } finally {
      await pool.close();
    }
  }, 60_000);

  it("with two threads reads two pictures at once, each its own text (OCR_CONCURRENCY=2)", async () => {
    const pool = createOcrPool({ concurrency: 2, languages: ["eng"] });
    // clean-01.jpg says "Crisp & Co / Whole wheat bread 5.01 / Price per kg" (truth.json).
    const pictures = await Promise.all([RECEIPT, path.join(__dirname, "../fixtures/ocr/clean-01.jpg")].map((f) => forOcr(readFileSync(f))));
    try {
      const [receipt, bread] = await Promise.all(pictures.map(async (p) => (await pool.read(p)).map((l) => l.text).join("\n")));
      expect(receipt).toContain("Urban Roast");
      expect(receipt).not.toContain("Crisp");
      expect(bread).toContain("Crisp & Co");
      expect(bread).not.toContain("Urban");
    } finally {
      await pool.close();
    }
  }, 60_000);
});
