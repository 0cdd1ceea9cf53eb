import { describe, expect, it } from "vitest";
import { LIMITS } from "~/lib/schemas";
import { cleanOcrText } from "~/services/ocr.server";

const line = (text: string, confidence: number, words = text.split(" ").map((w) => ({ text: w, confidence }))) => ({
  text,
  confidence,
  words,
});

describe("OCR text as the field keeps it", () => {
  it("keeps a sure line whole, cuts an unsure one to its sure words of two characters or more, drops lines without a letter or digit", () => {
    const text = cleanOcrText([
      line("TOTAL  12.50   EUR\n", 92),
      line("Fo ie 0 5 butter", 30, [
        { text: "Fo", confidence: 20 },
        { text: "ie", confidence: 5 },
        { text: "0", confidence: 90 },
        { text: "5", confidence: 88 },
        { text: "butter", confidence: 93 },
      ]),
      line("| _ . ~", 70),
      line("3 A IE", 20, [
        { text: "3", confidence: 76 },
        { text: "A", confidence: 42 },
        { text: "IE", confidence: 28 },
      ]),
    ]);
    expect(text).toBe("TOTAL 12.50 EUR\nbutter");
  });

  it("fits the field as a browser posts it back (line breaks as CRLF), whole lines only", () => {
    const long = Array.from({ length: 200 }, (_, i) => line(`${String(i).padStart(3, "0")} ${"x".repeat(95)}`, 95));
    const text = cleanOcrText(long);
    expect(text.replace(/\n/g, "\r\n").length).toBeLessThanOrEqual(LIMITS.ocr);
    expect(text.split("\n").every((l) => l.length === 99)).toBe(true);
    expect(text.split("\n").length).toBe(Math.floor((LIMITS.ocr + 2) / 101));
  });
});
