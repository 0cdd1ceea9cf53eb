import { describe, expect, it } from "vitest";
import { firstStrings } from "~/lib/json-strings";

/**
 * The keywords' reader (app/lib/json-strings.ts) gives exactly what JSON.parse gives, for every form the databases
 * hold: the compact one it scans, and those it must leave to JSON.parse.
 */
describe("firstStrings", () => {
  // toStrictEqual: an array made to size and cut to what was read must hold no hole (toEqual would let one pass).
  it("reads compact arrays as JSON.parse does, all of them or the first n, with no hole where fewer than n", () => {
    for (const words of [[], ["a"], ["fresh fruit", "paper bag"], ["", "x", ""], ["Café", "日本語", "emoji 🐨", "a,b", "[x]", "c]"]]) {
      const json = JSON.stringify(words);
      expect(firstStrings(json)).toStrictEqual(words);
      expect(firstStrings(json, 1)).toStrictEqual(words.slice(0, 1));
      expect(firstStrings(json, 5)).toStrictEqual(words.slice(0, 5));
      expect(firstStrings(json, 16)).toStrictEqual(words.slice(0, 16));
    }
  });

  it("leaves escapes, spaced arrays and other JSON to JSON.parse, with the same answer", () => {
    const cases = ['["say \\"hi\\"","b"]', '["tab\\there"]', '["a", "b", "c"]', '[ "a" ]', '["a",1]', '["\\u00e9t\\u00e9"]'];
    for (const json of cases) expect(firstStrings(json)).toEqual(JSON.parse(json));
    expect(firstStrings('["a", "b", "c"]', 2)).toEqual(["a", "b"]);
  });

  it("agrees with JSON.parse on random arrays of awkward strings", () => {
    const alphabet = ["a", " ", ",", '"', "\\", "]", "[", "é", "\n", "🐨", ":"];
    let seed = 7;
    const random = (n: number) => (seed = (seed * 48271) % 2147483647) % n;
    for (let i = 0; i < 2000; i++) {
      const words = Array.from({ length: random(8) }, () =>
        Array.from({ length: random(6) }, () => alphabet[random(alphabet.length)]).join(""),
      );
      const json = JSON.stringify(words);
      expect(firstStrings(json)).toStrictEqual(words);
      expect(firstStrings(json, 3)).toStrictEqual(words.slice(0, 3));
    }
  });

  it("throws on what is not a JSON array, as JSON.parse would", () => {
    expect(() => firstStrings('["a"')).toThrow();
    expect(() => firstStrings('["a"]x')).toThrow();
    expect(() => firstStrings('{"a":1}')).toThrow();
    expect(() => firstStrings("")).toThrow();
  });

  it("gives none for n of 0 or less, as slice would", () => {
    expect(firstStrings('["a","b"]', 0)).toEqual([]);
    expect(firstStrings('["a","b"]', -1)).toEqual([]);
    expect(() => firstStrings('["a"', 0)).toThrow();
  });
});
