import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { hasMarkup } from "~/services/image-files.server";

// What the check promises, as the regular expression it used to run over the file as Latin-1 text: the byte scan
// must answer as this does, for every file.
const ORACLE = /<(?:script|html|body|iframe|object|embed)[\s>/]|<!doctype|javascript:/i;
const oracle = (buf: Buffer) => ORACLE.test(buf.toString("latin1"));

const FOUND = [
  "<script>",
  "<SCRIPT src=x>",
  "<ScRiPt/",
  "<html>",
  "<HTML\n",
  "<body\t",
  "<iframe src=x>",
  "<object\r",
  "<embed\f",
  "<script\v",
  "<script\u00a0",
  "<!doctype html>",
  "<!DOCTYPE",
  "javascript:alert(1)",
  "JavaScript:",
];
const NOT_FOUND = [
  "<scripts>",
  "<scrip>",
  "<svg onload=x>",
  "< script>",
  "<script",
  "<htmlx",
  "javascript :",
  "javascrip:",
  "<!doctyp",
  ":javascript",
];

/**
 * `text` as Latin-1 bytes among random bytes, at the start, in the middle or at the end. The bytes around it are of
 * 0x80–0x9f, none of which can end a tag or start a word, so they never complete a near miss.
 */
function within(text: string, where: "start" | "middle" | "end") {
  const bytes = Buffer.from(text, "latin1");
  const noise = () => randomBytes(64).map((b) => 0x80 + (b & 0x1f));
  if (where === "start") return Buffer.concat([bytes, noise()]);
  if (where === "end") return Buffer.concat([noise(), bytes]);
  return Buffer.concat([noise(), bytes, noise()]);
}

describe("hasMarkup", () => {
  it("finds each kind of markup, in any case, at the start, in the middle and at the end of a file", () => {
    for (const text of FOUND)
      for (const where of ["start", "middle", "end"] as const) {
        const buf = within(text, where);
        expect(hasMarkup(buf), `${JSON.stringify(text)} at the ${where}`).toBe(true);
        expect(oracle(buf)).toBe(true);
      }
  });

  it("does not refuse near misses: a longer name, a shorter one, a tag cut off by the file's end, a space inside", () => {
    for (const text of NOT_FOUND)
      for (const where of ["start", "middle", "end"] as const) {
        const buf = within(text, where);
        expect(hasMarkup(buf), `${JSON.stringify(text)} at the ${where}`).toBe(false);
        expect(oracle(buf)).toBe(false);
      }
  });

  it("answers as the regular expression over the file as Latin-1 text, for 3,000 files of random bytes and markup pieces", () => {
    const pieces = [...FOUND, ...NOT_FOUND, "<", ":", "<<script>", "javascript::", "javajavascript:", "<!<!doctype"];
    let found = 0;
    for (let n = 0; n < 3000; n++) {
      const parts: Buffer[] = [];
      for (let k = 0; k < 6; k++)
        parts.push(Math.random() < 0.3 ? Buffer.from(pieces[Math.floor(Math.random() * pieces.length)]!, "latin1") : randomBytes(16));
      const buf = Buffer.concat(parts);
      const expected = oracle(buf);
      if (expected) found += 1;
      expect(hasMarkup(buf), buf.toString("hex")).toBe(expected);
    }
    // Both answers occur, so the comparison means something either way.
    expect(found).toBeGreaterThan(300);
    expect(found).toBeLessThan(2700);
  });
});
