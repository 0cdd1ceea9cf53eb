import { readFileSync } from "node:fs";
import path from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig, setConfig } from "~/config.server";
import { makeDerivatives } from "~/services/image-files.server";
import { closeOcr, readPictureText } from "~/services/ocr.server";
import { scoreSet, type Reading } from "../helpers/ocr-quality";

/**
 * OCR's accuracy, measured on the committed corpus (tests/fixtures/ocr/, made by its make-corpus.ts): each picture
 * goes the product's way (its preview made as on upload, then read by the pool) and is scored against its truth.
 * The figures are printed; the test fails above a character error rate of 5 % on the clean set, 15 % on the noisy.
 */
const DIR = path.join(__dirname, "../fixtures/ocr");
const truth = JSON.parse(readFileSync(path.join(DIR, "truth.json"), "utf8")) as { file: string; set: "clean" | "noisy"; text: string }[];

describe("OCR accuracy on the corpus", () => {
  const sets: Record<string, Reading[]> = { clean: [], noisy: [] };

  beforeAll(async () => {
    setConfig(loadConfig({ KOALA_ENV: "development", LOG_LEVEL: "error", OCR: "on" }));
    for (const t of truth) {
      const { preview } = await makeDerivatives(readFileSync(path.join(DIR, t.file)));
      sets[t.set]!.push({ truth: t.text, read: await readPictureText(preview) });
    }
  }, 300_000);
  afterAll(() => closeOcr());

  it("holds at least 40 pictures, clean and noisy", () => {
    expect(truth.length).toBeGreaterThanOrEqual(40);
    expect(sets.clean!.length).toBeGreaterThanOrEqual(20);
    expect(sets.noisy!.length).toBeGreaterThanOrEqual(20);
  });

  it("reads the clean set with a character error rate of at most 5 %", () => {
    const score = scoreSet(sets.clean!);
    console.log(
      `OCR clean set (${sets.clean!.length} pictures): CER ${(score.cer * 100).toFixed(2)} %, word recall ${(score.wordRecall * 100).toFixed(1)} %`,
    );
    expect(score.cer).toBeLessThanOrEqual(0.05);
  });

  it("reads the noisy set with a character error rate of at most 15 %", () => {
    const score = scoreSet(sets.noisy!);
    console.log(
      `OCR noisy set (${sets.noisy!.length} pictures): CER ${(score.cer * 100).toFixed(2)} %, word recall ${(score.wordRecall * 100).toFixed(1)} %`,
    );
    expect(score.cer).toBeLessThanOrEqual(0.15);
  });

  it("finds no words in pictures without any: a plain one, and shapes on a gradient under grain", async () => {
    const plain = await sharp({ create: { width: 800, height: 600, channels: 3, background: "#3366cc" } })
      .jpeg()
      .toBuffer();
    const circles = Array.from(
      { length: 12 },
      (_, i) => `<circle cx="${(i * 137) % 1200}" cy="${(i * 89) % 800}" r="${40 + ((i * 53) % 120)}" fill="#94d2bd" opacity="0.4"/>`,
    );
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="1200" height="800"><defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="#e9d8a6"/><stop offset="1" stop-color="#1b263b"/></linearGradient></defs><rect width="100%" height="100%" fill="url(#g)"/>${circles.join("")}</svg>`;
    const { data, info } = await sharp(Buffer.from(svg)).raw().toBuffer({ resolveWithObject: true });
    for (let i = 0; i < data.length; i++) data[i] = Math.max(0, Math.min(255, data[i]! + ((i * 7919) % 49) - 24));
    const textured = await sharp(data, { raw: { width: info.width, height: info.height, channels: info.channels } })
      .jpeg({ quality: 50 })
      .toBuffer();
    for (const picture of [plain, textured]) expect(await readPictureText((await makeDerivatives(picture)).preview)).toBe("");
  });
});
