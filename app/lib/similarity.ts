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

const BITS = Array.from({ length: 16 }, (_, n) => (n & 1) + ((n >> 1) & 1) + ((n >> 2) & 1) + ((n >> 3) & 1));

/** How many of two hashes' 64 bits differ. */
export function hamming(a: string, b: string): number {
  let n = 0;
  for (let i = 0; i < 16; i++) n += BITS[parseInt(a[i]!, 16) ^ parseInt(b[i]!, 16)]!;
  return n;
}

/**
 * Alike: the DCT hashes at most 7 bits apart, and both hashes together at most 16 (measured on the committed set:
 * tests/integration/duplicates-quality.test.ts). The lookup finds every image within the first bound (see
 * bandProbes); the second is checked on what it finds.
 */
export const MAX_PHASH_DISTANCE = 7;
export const MAX_DISTANCE = 16;

/** How far apart two pictures are, or null when they are not alike. */
export function distance(a: Fingerprint, b: Fingerprint): number | null {
  const p = hamming(a.phash, b.phash);
  if (p > MAX_PHASH_DISTANCE) return null;
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
