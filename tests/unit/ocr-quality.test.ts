import { describe, expect, it } from "vitest";
import { editDistance, scoreSet } from "../helpers/ocr-quality";

describe("the OCR corpus's scoring", () => {
  it("counts edits between two texts (Levenshtein)", () => {
    expect(editDistance("kitten", "sitting")).toBe(3);
    expect(editDistance("", "abc")).toBe(3);
    expect(editDistance("same", "same")).toBe(0);
  });

  it("gives a set's character error rate over all its truths, lines and runs of spaces as one space, and its word recall", () => {
    const score = scoreSet([
      { truth: "TOTAL 12.50\nEUR", read: "TOTAL  12.50 EUR" },
      { truth: "Oat milk", read: "0at milk" },
    ]);
    expect(score.cer).toBeCloseTo(1 / (15 + 8));
    expect(score.wordRecall).toBeCloseTo(4 / 5);
  });
});
