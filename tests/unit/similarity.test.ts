import { describe, expect, it } from "vitest";
import { bandProbes, bandsOf, distance, hamming, nearAny } from "~/lib/similarity";

/** Counted a bit at a time on the 64-bit value: what `hamming`'s halves and bit tricks must agree with. */
const slowHamming = (a: string, b: string) => [...(BigInt(`0x${a}`) ^ BigInt(`0x${b}`)).toString(2)].filter((c) => c === "1").length;

let state = 42;
const randomHex = () =>
  Array.from({ length: 16 }, () => {
    state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
    return (state >>> 16) % 16;
  })
    .map((d) => d.toString(16))
    .join("");

describe("near-duplicate hashes", () => {
  it("counts the differing bits of two hashes exactly, the top bit of each half included", () => {
    expect(hamming("0000000000000000", "ffffffffffffffff")).toBe(64);
    expect(hamming("8000000080000000", "0000000000000000")).toBe(2);
    expect(hamming("0123456789abcdef", "0123456789abcdef")).toBe(0);
    expect(hamming("00000000ffffffff", "ffffffff00000000")).toBe(64);
    for (let i = 0; i < 2000; i++) {
      const [a, b] = [randomHex(), randomHex()];
      expect(hamming(a, b), `${a} ${b}`).toBe(slowHamming(a, b));
    }
  });

  it("calls two pictures alike within 7 DCT bits and 16 bits of both hashes, and not beyond", () => {
    const a = { phash: "0123456789abcdef", dhash: "0000000000000000" };
    expect(distance(a, { phash: "0123456789abcd90", dhash: "0000000000000000" })).toBe(7);
    expect(distance(a, { phash: "0123456789abcd10", dhash: "0000000000000000" })).toBeNull();
    expect(distance(a, { phash: "0123456789abcdee", dhash: "00000000000007ff" })).toBe(12);
    expect(distance(a, { phash: "0123456789abcd90", dhash: "00000000000001ff" })).toBe(16);
    expect(distance(a, { phash: "0123456789abcd90", dhash: "00000000000003ff" })).toBeNull();
  });

  it("tells whether a hash is within a bound of any of several, as hamming counts", () => {
    const prints = [randomHex(), randomHex(), randomHex()];
    const within = nearAny(prints, 7);
    let inside = 0;
    for (let i = 0; i < 2000; i++) {
      // One of the prints with 0 to 11 of its bits flipped (some twice): near it, or not.
      let bits = BigInt(`0x${prints[i % 3]}`);
      for (let k = 0; k < i % 12; k++) bits ^= 1n << BigInt(parseInt(randomHex().slice(0, 2), 16) % 64);
      const hash = bits.toString(16).padStart(16, "0");
      const want = prints.some((p) => slowHamming(p, hash) <= 7);
      expect(within(hash), hash).toBe(want);
      if (want) inside += 1;
    }
    // Both answers were put to the test, many times.
    expect(inside).toBeGreaterThan(400);
    expect(2000 - inside).toBeGreaterThan(400);
    const near = (BigInt(`0x${prints[1]}`) ^ 0x8000_0001_0000_0041n).toString(16).padStart(16, "0");
    expect(within(near)).toBe(true);
    expect(nearAny(prints, 3)(near)).toBe(false);
    expect(nearAny([], 7)(near)).toBe(false);
  });

  it("probes a value or a one-bit neighbour in some quarter of every hash within 7 bits (pigeonhole)", () => {
    for (let i = 0; i < 500; i++) {
      const phash = randomHex().replace(/^./, (d) => (parseInt(d, 16) & 7).toString(16));
      const probes = bandProbes(phash);
      let near = BigInt(`0x${phash}`);
      const bits = new Set<number>();
      // The DCT hash has 63 bits: its top bit is never set, and never flipped.
      while (bits.size < 7) bits.add(parseInt(randomHex().slice(0, 2), 16) % 63);
      for (const bit of bits) near ^= 1n << BigInt(bit);
      const other = bandsOf(near.toString(16).padStart(16, "0"));
      expect(
        other.some((v, q) => probes[q]!.includes(v)),
        phash,
      ).toBe(true);
    }
  });
});
