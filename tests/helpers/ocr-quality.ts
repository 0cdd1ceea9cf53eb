/**
 * How well OCR read a picture, against its ground truth: the character error rate (edit distance over the truth's
 * length, lines joined by a space, spaces single) and word recall (the truth's words found among those read, case
 * folded, punctuation at a word's ends dropped).
 */
const flat = (text: string) => text.replace(/\s+/g, " ").trim();
const words = (text: string) =>
  flat(text)
    .toLowerCase()
    .split(" ")
    .map((w) => w.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, ""))
    .filter(Boolean);

/** Levenshtein distance, two rows at a time. */
export function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length]!;
}

export interface Reading {
  truth: string;
  read: string;
}

/** A set's figures: its characters' error rate in all (errors summed over truths' lengths summed) and word recall. */
export function scoreSet(readings: Reading[]) {
  let errors = 0;
  let chars = 0;
  let found = 0;
  let wanted = 0;
  for (const { truth, read } of readings) {
    errors += editDistance(flat(read), flat(truth));
    chars += flat(truth).length;
    const seen = new Set(words(read));
    const want = words(truth);
    wanted += want.length;
    found += want.filter((w) => seen.has(w)).length;
  }
  return { cer: errors / chars, wordRecall: found / wanted };
}
