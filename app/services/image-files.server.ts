import type { Actor } from "~/models/actor";
import { setProjectLogo } from "~/models/projects.server";
import { availableParallelism } from "node:os";
import sharp from "sharp";
import { config } from "~/config.server";
import { sha256 } from "~/lib/crypto.server";
import { NO_POSITION_VARIANT } from "~/lib/capture";
import { GRID_THUMB_WIDTH, gridThumbKey } from "~/lib/media";
import { limiter } from "~/lib/limiter";
import { HttpError } from "~/lib/errors";
import type { StoredImageFile } from "~/models/images.server";
import { claimObjects } from "~/models/objects.server";
import { readCapture } from "./capture.server";
import { holdsPosition, withoutPosition } from "./positions.server";
import { similarityOf, type RawPixels } from "./similarity.server";
import { SourceChanged } from "./storage-contract";
import { objectKey, storage } from "./storage.server";

// libvips' operation cache keeps recent results for a repeat of the same operation on the same bytes; a server
// decodes each upload and each preview once, so the cache only held memory: up to 50 MB (decision 0029).
sharp.cache(false);

/** The file itself is not acceptable (type, size, pixels, damage): 422 with what is wrong with it. */
export class ImageRejected extends HttpError {
  constructor(message: string) {
    super(422, message);
    this.name = "ImageRejected";
  }
}

/** The refusal of a file over MAX_IMAGE_BYTES. */
export const tooLarge = () => new ImageRejected(`The file is larger than ${Math.round(config().maxImageBytes / 1024 / 1024)} MB.`);

export interface SniffedType {
  mime: string;
  ext: string;
}

/**
 * The image type from the file's first bytes; null for anything not on the allow-list.
 * SVG, HTML and text are never images here, whatever their name says.
 */
export function sniffImageType(buf: Buffer): SniffedType | null {
  const at = (offset: number, bytes: number[]) => bytes.every((b, i) => buf[offset + i] === b);
  const ascii = (offset: number, text: string) => buf.subarray(offset, offset + text.length).toString("latin1") === text;
  if (buf.length < 12) return null;
  if (at(0, [0xff, 0xd8, 0xff])) return { mime: "image/jpeg", ext: "jpg" };
  if (at(0, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return { mime: "image/png", ext: "png" };
  if (ascii(0, "GIF87a") || ascii(0, "GIF89a")) return { mime: "image/gif", ext: "gif" };
  if (ascii(0, "RIFF") && ascii(8, "WEBP")) return { mime: "image/webp", ext: "webp" };
  if (at(0, [0x49, 0x49, 0x2a, 0x00]) || at(0, [0x4d, 0x4d, 0x00, 0x2a])) return { mime: "image/tiff", ext: "tif" };
  if (ascii(4, "ftyp")) {
    const brand = buf.subarray(8, 12).toString("latin1");
    if (brand === "avif" || brand === "avis") return { mime: "image/avif", ext: "avif" };
    if (["heic", "heix", "hevc", "hevx", "mif1", "msf1"].includes(brand)) return { mime: "image/heif", ext: "heic" };
  }
  return null;
}

// Markup a browser could be tricked into running. A polyglot (a valid image that is also an HTML page) holds it on
// purpose; compressed image data holds one of these long patterns by chance about once in 10^6 large files or less
// (shorter tags such as <a or <svg would match by chance far too often to be refused). What is looked for, in any
// case: `<script`, `<html`, `<body`, `<iframe`, `<object` or `<embed` followed by a space, `>` or `/`; `<!doctype`;
// `javascript:`.
const TAGS = ["script", "html", "body", "iframe", "object", "embed"].map((t) => Buffer.from(t, "latin1"));
const DOCTYPE = Buffer.from("!doctype", "latin1");
const JAVASCRIPT = Buffer.from("javascript", "latin1");
/** After a tag's name: what the regular expression \s matches in Latin-1 (tab, LF, VT, FF, CR, space, NBSP), > or /. */
const TAG_END = new Set([0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x20, 0xa0, 0x3e, 0x2f]);

/** Whether `buf` holds the lower-case ASCII `word` at `at`, in any case. */
function wordAt(buf: Buffer, at: number, word: Buffer): boolean {
  if (at < 0 || at + word.length > buf.length) return false;
  for (let i = 0; i < word.length; i++) {
    const b = buf[at + i]!;
    if ((b >= 0x41 && b <= 0x5a ? b | 0x20 : b) !== word[i]) return false;
  }
  return true;
}

/**
 * Whether the file holds such markup. A scan of the bytes for `<` and `:` (memchr-fast) with the words checked beside
 * each: the same answer as a case-insensitive regular expression over the file as Latin-1 text, without making that
 * text (a 4 MB photo's check took 16 ms of the server's thread that way, 3 ms this way; bench P6).
 */
export function hasMarkup(buf: Buffer): boolean {
  for (let at = buf.indexOf(0x3c); at !== -1; at = buf.indexOf(0x3c, at + 1)) {
    if (wordAt(buf, at + 1, DOCTYPE)) return true;
    for (const tag of TAGS) {
      const end = at + 1 + tag.length;
      if (end < buf.length && TAG_END.has(buf[end]!) && wordAt(buf, at + 1, tag)) return true;
    }
  }
  for (let at = buf.indexOf(0x3a); at !== -1; at = buf.indexOf(0x3a, at + 1))
    if (wordAt(buf, at - JAVASCRIPT.length, JAVASCRIPT)) return true;
  return false;
}

export const THUMB_WIDTH = 480;
export const PREVIEW_WIDTH = 1600;

export interface CheckedImage {
  type: SniffedType;
  width: number;
  height: number;
}

/**
 * Header checks: type on the allow-list, size and pixel limits. The full decode that catches
 * truncated or corrupt pixel data happens once, while the derivatives are made (storeImageFile).
 */
export async function checkImage(buf: Buffer): Promise<CheckedImage> {
  const cfg = config();
  if (buf.length === 0) throw new ImageRejected("The file is empty.");
  if (buf.length > cfg.maxImageBytes) throw tooLarge();
  const type = sniffImageType(buf);
  if (!type) throw new ImageRejected("The file is not a supported image (JPEG, PNG, WebP, GIF, TIFF, AVIF or HEIF).");
  if (hasMarkup(buf)) throw new ImageRejected("The file holds HTML or script as well as an image, so it is not accepted.");
  let meta: Awaited<ReturnType<ReturnType<typeof sharp>["metadata"]>>;
  try {
    meta = await sharp(buf, { limitInputPixels: false }).metadata();
  } catch {
    throw new ImageRejected("The image could not be read; it may be damaged.");
  }
  // As shown: a photo taken on its side (EXIF orientation 5–8) is stored upright, its sides swapped.
  const width = meta.autoOrient?.width ?? meta.width ?? 0;
  const height = meta.autoOrient?.height ?? meta.height ?? 0;
  if (!width || !height) throw new ImageRejected("The image could not be read; it may be damaged.");
  if (width * height > cfg.maxImagePixels)
    throw new ImageRejected(`The image is too large: at most ${Math.round(cfg.maxImagePixels / 1e6)} megapixels.`);
  return { type, width, height };
}

/**
 * Decoding is the memory-hungry part (a 50-megapixel image is 150 MB of pixels, twice over for thumb and
 * preview): at most one decode per core runs at once in this process, however many uploads arrive together.
 */
const withDecodeSlot = limiter(availableParallelism());

/**
 * WebP derivatives of an original, turned by `rotation` degrees (EXIF orientation applied first); with `similarity`,
 * its perceptual hashes too, made from the same decode.
 */
export function makeDerivatives(buf: Buffer, rotation = 0, opts: { similarity?: boolean } = {}) {
  return withDecodeSlot(() => derive(buf, rotation, opts.similarity ?? false));
}

/**
 * One decode of the original (JPEG shrink-on-load, orientation, rotation) down to preview size, kept as raw
 * pixels; the three WebP files (thumbnail, grid thumbnail, preview) are encoded from those. Decoding once instead of once per derivative saves ~15% of the
 * work per 12-megapixel photo (bench P6).
 */
async function derive(buf: Buffer, rotation: number, similarity: boolean) {
  const raw = await decoded(buf, rotation);
  const pixels = () => sharp(raw.data, { raw: { width: raw.width, height: raw.height, channels: raw.channels } });
  const thumbnail = pixels()
    .resize({ width: THUMB_WIDTH, height: THUMB_WIDTH, fit: "inside", withoutEnlargement: true })
    .webp({ quality: 78 })
    .toBuffer();
  const grid = pixels()
    .resize({ width: GRID_THUMB_WIDTH, height: GRID_THUMB_WIDTH, fit: "inside", withoutEnlargement: true })
    .webp({ quality: GRID_THUMB_QUALITY })
    .toBuffer();
  const large = pixels().webp({ quality: 82 }).toBuffer();
  // The hashes are made on this thread while sharp encodes on its own.
  const hashes = similarity ? similarityOf(raw, rotation) : undefined;
  const [thumb, gridThumb, preview] = await Promise.all([thumbnail, grid, large]);
  return { thumb, gridThumb, preview, similarity: hashes };
}

/** The grid thumbnail is seen small and briefly (while scrolling): a little more compression costs nothing visible. */
const GRID_THUMB_QUALITY = 75;

/**
 * The grid thumbnail of a thumbnail stored before grid thumbnails were made (media.server.ts makes it on its first
 * request): from the 480-pixel thumbnail, which is the original as shown, already turned.
 */
export function gridThumbFrom(thumb: Buffer) {
  return withDecodeSlot(() =>
    sharp(thumb, { failOn: "error" })
      .resize({ width: GRID_THUMB_WIDTH, height: GRID_THUMB_WIDTH, fit: "inside", withoutEnlargement: true })
      .webp({ quality: GRID_THUMB_QUALITY })
      .toBuffer(),
  );
}

/** The original decoded once, as shown (orientation, rotation) and at most preview size: raw pixels to make things of. */
async function decoded(buf: Buffer, rotation: number): Promise<RawPixels & { data: Buffer; channels: 1 | 2 | 3 | 4 }> {
  const { data, info } = await sharp(buf, { failOn: "error", limitInputPixels: config().maxImagePixels })
    .rotate()
    .rotate(rotation)
    .resize({ width: PREVIEW_WIDTH, height: PREVIEW_WIDTH, fit: "inside", withoutEnlargement: true })
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: info.channels };
}

/** A picture Koala made (a preview) as 8-bit raw pixels, decoded in a slot like the rest. */
export function rawPixels(buf: Buffer) {
  return withDecodeSlot(async () => {
    const { data, info } = await sharp(buf, { failOn: "error" }).raw({ depth: "uchar" }).toBuffer({ resolveWithObject: true });
    return { data, width: info.width, height: info.height, channels: info.channels };
  });
}

/** A file's perceptual hashes alone, made as on upload (what the duplicates' quality test measures); none for a flat picture. */
export async function fileSimilarity(buf: Buffer) {
  return withDecodeSlot(async () => similarityOf(await decoded(buf, 0)));
}

/** The derivative keys of a file (by checksum) turned by `rotation` degrees; unrotated ones carry no suffix. */
export function derivativeKeys(checksum: string, rotation: number) {
  const variant = rotation ? `r${rotation}` : undefined;
  return { thumbKey: objectKey("thumbs", checksum, "webp", variant), previewKey: objectKey("previews", checksum, "webp", variant) };
}

/**
 * Makes and stores the derivatives of an original for a rotation (claimed first: see objects.server.ts); answers their
 * keys, and the perceptual hashes when asked (`similarity`).
 */
export async function storeDerivatives(buf: Buffer, checksum: string, rotation: number, opts: { similarity?: boolean } = {}) {
  const keys = derivativeKeys(checksum, rotation);
  // The grid thumbnail's key follows the thumbnail's (rows name only the latter; objects.server.ts purges both).
  const gridKey = gridThumbKey(keys.thumbKey);
  await claimObjects(checksum, [keys.thumbKey, gridKey, keys.previewKey]);
  let derivatives: Awaited<ReturnType<typeof makeDerivatives>>;
  try {
    derivatives = await makeDerivatives(buf, rotation, opts);
  } catch {
    throw new ImageRejected("The image could not be read; it may be damaged or truncated.");
  }
  await storage().put(keys.thumbKey, derivatives.thumb);
  await storage().put(gridKey, derivatives.gridThumb);
  await storage().put(keys.previewKey, derivatives.preview);
  return { ...keys, similarity: derivatives.similarity };
}

/**
 * Checks an image, stores the original and its derivatives under content-addressed keys. `source` is the object
 * `buf` was read from (an upload), when the store may copy the original from it rather than be sent it again.
 * Unless `keepPositions` (the project keeps where photos were taken), the original is stored without the position its
 * camera recorded (positions.server.ts) under its own key; a position that could not be taken out refuses the file
 * rather than keep it.
 */
export async function storeImageFile(
  buf: Buffer,
  { source, keepPositions = false }: { source?: { key: string; etag?: string }; keepPositions?: boolean } = {},
): Promise<StoredImageFile> {
  const checked = await checkImage(buf);
  const capture = await readCapture(buf);
  const bytes = keepPositions ? buf : withoutPosition(buf);
  // What the edit could not reach (EXIF laid out in a way it does not know) refuses the file rather than keep it.
  if (!keepPositions && (bytes === buf ? capture : await readCapture(bytes)).gps) throw new ImageRejected(POSITION_LEFT);
  const hash = sha256(buf);
  const storageKey = originalKey(hash, checked.type.ext, bytes !== buf);
  await claimObjects(hash, [storageKey]);
  // Derivatives first, original last: an original present means its derivatives are too.
  const { similarity, ...derivatives } = await storeDerivatives(bytes, hash, 0, { similarity: true });
  // The upload object holds the bytes as sent: copied only when they are the ones stored.
  if ((await storage().size(storageKey)) !== bytes.length) await storeOriginal(storageKey, bytes, hash, bytes === buf ? source : undefined);
  return {
    storageKey,
    ...derivatives,
    similarity,
    mimeType: checked.type.mime,
    sizeBytes: bytes.length,
    width: checked.width,
    height: checked.height,
    checksum: hash,
    capture: keepPositions ? capture : { ...capture, gps: null },
    keptPosition: keepPositions && (capture.gps !== null || holdsPosition(buf)),
  };
}

/**
 * An original's key: its checksum (the file as sent: the same file is found again whatever its project keeps), with
 * `-nogps` when the bytes stored are the file less its position. Keys embed the checksum (objects.server.ts).
 */
const originalKey = (checksum: string, ext: string, positionRemoved: boolean) =>
  objectKey("originals", checksum, ext, positionRemoved ? NO_POSITION_VARIANT : undefined);
/** The key of an image's original (`key`, under `checksum`) once its position is taken out. */
export const keyWithoutPosition = (checksum: string, key: string) => originalKey(checksum, key.slice(key.lastIndexOf(".") + 1), true);

const POSITION_LEFT =
  "This photo holds the place it was taken in a form Koala cannot take out, and this project keeps no positions. Remove the position from the file, or ask a manager to let the project keep positions.";

/**
 * A copy inside the store where it can (S3), else a PUT of the bytes. The copy is taken only from the version of the
 * source that was read and checked: a still-valid upload URL may have rewritten it since, and then (SourceChanged)
 * the checked bytes are sent instead, never the source's new ones.
 */
async function storeOriginal(key: string, buf: Buffer, hash: string, source?: { key: string; etag?: string }) {
  const store = storage();
  if (source?.etag && store.copy) {
    try {
      return await store.copy(source.key, key, { ifMatch: source.etag, sha256: hash });
    } catch (err) {
      if (!(err instanceof SourceChanged)) throw err;
    }
  }
  await store.put(key, buf);
}

/**
 * Gives a project a new logo (or none): stores it, points the project at it, and deletes the old file when no
 * project uses it any more (keys are content hashes, so two projects may share one).
 */
export async function replaceProjectLogo(actor: Actor, projectId: number, file: Buffer | null) {
  const key = file ? await storeLogo(file) : null;
  const unused = await setProjectLogo(actor, projectId, key);
  if (unused && unused !== key) await storage().delete(unused);
}

/** A project logo: PNG, JPEG or WebP checked like any image, cut to a 256-pixel square WebP, stored under its content hash. */
async function storeLogo(buf: Buffer): Promise<string> {
  const checked = await checkImage(buf);
  if (!["jpg", "png", "webp"].includes(checked.type.ext)) throw new ImageRejected("A logo must be a PNG, JPEG or WebP image.");
  let logo: Buffer;
  try {
    logo = await withDecodeSlot(() =>
      sharp(buf, { failOn: "error", limitInputPixels: config().maxImagePixels })
        .rotate()
        .resize(256, 256, { fit: "cover" })
        .webp({ quality: 85 })
        .toBuffer(),
    );
  } catch {
    throw new ImageRejected("The image could not be read; it may be damaged or truncated.");
  }
  const key = objectKey("logos", sha256(logo), "webp");
  if ((await storage().size(key)) !== logo.length) await storage().put(key, logo);
  return key;
}
