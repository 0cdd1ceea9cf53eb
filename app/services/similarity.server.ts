import type { Fingerprint, Similarity } from "~/lib/similarity";

/**
 * Perceptual hashes of a picture, for near-duplicates (decision 0028): what survives resizing, re-compression, a
 * small crop and a change of brightness, and differs between different pictures.
 * - `phash`: the signs of the 63 lowest frequencies (less the mean) of a 32 × 32 grey copy's DCT, against their
 *   median. Robust to brightness and re-compression.
 * - `dhash`: whether each of 8 × 8 cells is brighter than its right neighbour (a 9 × 8 grey copy). Cheap, and a
 *   second, differently made opinion: together they told a picture from another of the same layout (receipts,
 *   shelves) better than either alone (tests/integration/duplicates-quality.test.ts).
 * Made from the pixels the derivatives are made from (EXIF orientation applied, then the image's own `rotation`),
 * as the file stands (the image's rotation undone, so that an editor's turn does not change them); `turned` holds the
 * same picture's hashes turned by 90, 180 and 270 degrees, so that a copy uploaded on its side is found too.
 */
export function similarityOf(raw: RawPixels, rotation = 0): Similarity | undefined {
  // One pass over the decoded picture, to a small grey square (its shape is not part of its hash); the turns and the
  // smaller grids are made of that. Plain arithmetic: sharp's resize of a 1,600-pixel preview to 64 took 10 ms, and a
  // pipeline per turn ~2 ms more; this takes about 5 ms in all.
  let square = greySquare(raw);
  // A flat picture (one colour, a blank page) has no shape to hash: its bits would be rounding noise, alike or not by
  // chance. It gets none, and is nobody's look-alike.
  if (spread(square) < MIN_SPREAD) return undefined;
  // As the file stands: the image's own rotation undone.
  for (let r = rotation; r % 360 !== 0; r += 90) square = turn(square);
  const prints: Fingerprint[] = [];
  for (let angle = 0; angle < 360; angle += 90, square = turn(square)) prints.push(fingerprint(square));
  const [upright, ...turned] = prints;
  return { ...upright!, turned };
}

const SQUARE = 64;

/** Decoded pixels as sharp gives them (`raw()`): rows of `channels` bytes a pixel. */
export interface RawPixels {
  data: Uint8Array;
  width: number;
  height: number;
  channels: number;
}

/** Below this standard deviation of the grid's grey (0–255) a picture is flat. */
const MIN_SPREAD = 2;
function spread(grid: Uint8Array): number {
  const mean = grid.reduce((s, v) => s + v, 0) / grid.length;
  return Math.sqrt(grid.reduce((s, v) => s + (v - mean) ** 2, 0) / grid.length);
}

/**
 * The picture as a 64 × 64 grid of mean luma (BT.601 weights), stretched to fill, transparency laid on white (as a
 * browser shows it on the page). Each cell is the mean of the pixels it covers, and at least the one it starts on, so
 * a picture smaller than the grid is stretched, not left with empty cells. Integer luma ×256 (77 R + 150 G + 29 B), and
 * each column's span worked out once: a 1,600 × 1,200 preview in ~5 ms.
 */
function greySquare({ data, width, height, channels }: RawPixels): Uint8Array {
  const span = (cell: number, size: number) => {
    const from = Math.floor((cell * size) / SQUARE);
    return [from, Math.max(from + 1, Math.floor(((cell + 1) * size) / SQUARE))] as const;
  };
  const columns = Array.from({ length: SQUARE }, (_, c) => span(c, width));
  const colour = channels >= 3;
  const alpha = channels === 2 || channels === 4 ? channels - 1 : -1;
  const grid = new Uint8Array(SQUARE * SQUARE);
  for (let r = 0; r < SQUARE; r++) {
    const [y0, y1] = span(r, height);
    for (let c = 0; c < SQUARE; c++) {
      const [x0, x1] = columns[c]!;
      let sum = 0;
      for (let y = y0; y < y1; y++) {
        const end = (y * width + x1) * channels;
        let i = (y * width + x0) * channels;
        // The common case (colour, opaque: a preview) in a loop of its own, without a branch per pixel.
        if (colour && alpha < 0) for (; i < end; i += channels) sum += 77 * data[i]! + 150 * data[i + 1]! + 29 * data[i + 2]!;
        else
          for (; i < end; i += channels) {
            const luma = colour ? 77 * data[i]! + 150 * data[i + 1]! + 29 * data[i + 2]! : 256 * data[i]!;
            sum += alpha < 0 ? luma : (luma * data[i + alpha]! + 256 * 255 * (255 - data[i + alpha]!)) / 255;
          }
      }
      grid[r * SQUARE + c] = Math.round(sum / 256 / ((x1 - x0) * (y1 - y0)));
    }
  }
  return grid;
}

/** A square grid turned 90° clockwise. */
function turn(grid: Uint8Array): Uint8Array {
  const out = new Uint8Array(grid.length);
  for (let y = 0; y < SQUARE; y++) for (let x = 0; x < SQUARE; x++) out[x * SQUARE + (SQUARE - 1 - y)] = grid[y * SQUARE + x]!;
  return out;
}

/** The grid's mean over blocks: `w` × `h` of them, split at whole pixels. */
function blocks(grid: Uint8Array, w: number, h: number): Uint8Array {
  const out = new Uint8Array(w * h);
  for (let by = 0; by < h; by++)
    for (let bx = 0; bx < w; bx++) {
      const [x0, x1, y0, y1] = [
        Math.floor((bx * SQUARE) / w),
        Math.floor(((bx + 1) * SQUARE) / w),
        Math.floor((by * SQUARE) / h),
        Math.floor(((by + 1) * SQUARE) / h),
      ];
      let sum = 0;
      for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) sum += grid[y * SQUARE + x]!;
      out[by * w + bx] = Math.round(sum / ((x1 - x0) * (y1 - y0)));
    }
  return out;
}

const fingerprint = (square: Uint8Array): Fingerprint => ({ phash: phashOf(blocks(square, 32, 32)), dhash: dhashOf(blocks(square, 9, 8)) });

const N = 32;
const K = 8;
const COS = Array.from({ length: K }, (_, u) => Array.from({ length: N }, (_, x) => Math.cos(((2 * x + 1) * u * Math.PI) / (2 * N))));

export function phashOf(px: Uint8Array): string {
  // The K × K lowest frequencies of the 2-D DCT-II, rows first.
  const rows: number[][] = [];
  for (let y = 0; y < N; y++) rows.push(COS.map((c) => c.reduce((sum, w, x) => sum + px[y * N + x]! * w, 0)));
  const coefficients: number[] = [];
  for (let u = 0; u < K; u++) for (let v = 0; v < K; v++) coefficients.push(rows.reduce((sum, row, y) => sum + row[v]! * COS[u]![y]!, 0));
  const ac = coefficients.slice(1); // the mean (DC) says only how bright the picture is
  const median = [...ac].sort((a, b) => a - b)[ac.length >> 1]!;
  return hex(ac.map((c) => c > median));
}

export function dhashOf(px: Uint8Array): string {
  const bits: boolean[] = [];
  for (let y = 0; y < 8; y++) for (let x = 0; x < 8; x++) bits.push(px[y * 9 + x]! > px[y * 9 + x + 1]!);
  return hex(bits);
}

/** Bits, most significant first, as 16 hex digits (63 bits get a leading 0). */
function hex(bits: boolean[]): string {
  const padded = [...Array<boolean>(64 - bits.length).fill(false), ...bits];
  let out = "";
  for (let i = 0; i < 64; i += 4)
    out += ((+padded[i]! << 3) | (+padded[i + 1]! << 2) | (+padded[i + 2]! << 1) | +padded[i + 3]!).toString(16);
  return out;
}
