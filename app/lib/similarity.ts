/**
 * Near-duplicates: two perceptual hashes per picture (services/similarity.server.ts makes them), how far apart two
 * pictures are, and the rule that calls them alike (decision 0028).
 */
export interface Fingerprint {
  /** 16 hex digits each. */
  phash: string;
  dhash: string;
}
/** An upright picture's hashes, and the same picture's turned by 90, 180 and 270 degrees (for the lookup only). */
export interface Similarity extends Fingerprint {
  turned: Fingerprint[];
}

/** Set bits of a 32-bit value (SWAR). */
function bitCount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
}

/** A hash's two 32-bit halves. */
const high = (hash: string) => parseInt(hash.slice(0, 8), 16);
const low = (hash: string) => parseInt(hash.slice(8, 16), 16);

/** How many of two hashes' 64 bits differ. */
export function hamming(a: string, b: string): number {
  return bitCount(high(a) ^ high(b)) + bitCount(low(a) ^ low(b));
}

/**
 * Whether a hash is within `max` bits of one of `hashes`, each parsed once: a lookup sifts a thousand candidates
 * against its prints. A digit at a time (a parse and a table look-up each), that took 9 ms of 14 (bench P15).
 */
export function nearAny(hashes: string[], max: number): (hash: string) => boolean {
  const highs = hashes.map(high);
  const lows = hashes.map(low);
  return (hash) => {
    const [h, l] = [high(hash), low(hash)];
    for (let i = 0; i < highs.length; i++) if (bitCount(highs[i]! ^ h) + bitCount(lows[i]! ^ l) <= max) return true;
    return false;
  };
}

/**
 * Alike: the DCT hashes at most 7 bits apart, and both hashes together at most 16 (measured on the committed set:
 * tests/integration/duplicates-quality.test.ts). The lookup finds every image within the first bound (see
 * bandProbes); the second is checked on what it finds. A picture turned by a quarter or a half is alike when its
 * turned DCT hash is at most 3 bits from the image's (MAX_TURNED_PHASH_DISTANCE): what the lookup probes for turns.
 */
export const MAX_PHASH_DISTANCE = 7;
export const MAX_TURNED_PHASH_DISTANCE = 3;
export const MAX_DISTANCE = 16;

/** How far apart two pictures are (the DCT hashes at most `maxPhash` bits), or null when they are not alike. */
export function distance(a: Fingerprint, b: Fingerprint, maxPhash = MAX_PHASH_DISTANCE): number | null {
  const p = hamming(a.phash, b.phash);
  if (p > maxPhash) return null;
  const d = p + hamming(a.dhash, b.dhash);
  return d <= MAX_DISTANCE ? d : null;
}

/** The DCT hash's four 16-bit quarters, high to low (the indexed columns ph0…ph3). */
export const bandsOf = (phash: string) => [0, 1, 2, 3].map((i) => parseInt(phash.slice(i * 4, i * 4 + 4), 16));

/**
 * The values each quarter may hold in a hash at most 7 bits from `phash`: its own and those one bit away. Seven
 * differing bits spread over four quarters leave at least one quarter with at most one (pigeonhole), so an image
 * within the bound holds one of these values in the same quarter (multi-index hashing).
 */
export function bandProbes(phash: string): number[][] {
  // The DCT hash has 63 bits: the first quarter's top bit is always 0, and is not probed.
  return bandsOf(phash).map((value, quarter) => [
    value,
    ...Array.from({ length: quarter === 0 ? 15 : 16 }, (_, bit) => value ^ (1 << bit)),
  ]);
}
