import { crc32 } from "node:zlib";

/**
 * Takes the position a camera recorded out of a file's own bytes, for projects that keep none (`projects.keep_gps`
 * off): the EXIF GPS directory, and XMP's `exif:GPS…` properties. Lossless and in place: the pixels and every other
 * tag stay byte for byte, the file keeps its length, and nothing is decoded or re-encoded. The same file always gives
 * the same bytes, so a second upload of it is stored as the same object.
 *
 * Where the metadata lives, by container: JPEG's APP1 segments; PNG's eXIf chunk (its CRC made again); WebP's EXIF
 * and XMP chunks; a TIFF file's own directories; HEIF/AVIF's Exif item (found by its "Exif\0\0" header) and XMP
 * packet. An EXIF position left anywhere else is caught by the caller's check
 * (storeImageFile). One exception to "in place": in a PNG, whose chunks stand alone, every chunk that could hold a
 * position Koala does not read is dropped whole, unread (pngChunksToDrop): that file gets shorter.
 */
export function withoutPosition(buf: Buffer): Buffer {
  const blocks = positionBlocks(buf);
  const drops = pngChunksToDrop(buf);
  if (!blocks.length && !drops.length) return buf;
  const out = Buffer.from(buf);
  for (const b of blocks) {
    if (b.kind === "tiff") gpsDirectory(out, b, true);
    else xmpPositions(out, b, true);
    if (b.pngChunk !== undefined) {
      const dataEnd = b.pngChunk + 8 + out.readUInt32BE(b.pngChunk);
      out.writeUInt32BE(crc32(out.subarray(b.pngChunk + 4, dataEnd)), dataEnd);
    }
  }
  if (!drops.length) return out;
  // Copied into one buffer (a hostile PNG of millions of tiny chunks must not become millions of slices).
  const left = Buffer.allocUnsafe(out.length - drops.reduce((n, d) => n + d.end - d.start, 0));
  let from = 0;
  let to = 0;
  for (const d of drops) {
    to += out.copy(left, to, from, d.start);
    from = d.end;
  }
  out.copy(left, to, from);
  return left;
}

/** Whether withoutPosition would change the file: it states a position to take out, or (a PNG) a chunk that may hold one. */
export const holdsPosition = (buf: Buffer) => positionBlocks(buf).length > 0 || pngChunksToDrop(buf).length > 0;

const positionBlocks = (buf: Buffer) =>
  metadataBlocks(buf).filter((b) => (b.kind === "tiff" ? gpsDirectory(buf, b, false) : xmpPositions(buf, b, false)));

interface Block {
  kind: "tiff" | "xmp";
  start: number;
  end: number;
  /** The PNG chunk (its offset) whose CRC covers the block. */
  pngChunk?: number;
}

const ascii = (buf: Buffer, start: number, end: number) => buf.toString("latin1", start, end);
const EXIF_HEADER = Buffer.from("Exif\0\0", "latin1");
const XMP_JPEG = "http://ns.adobe.com/xap/1.0/\0";
/** Words that name a position in a property or keyword: GPS…, or Latitude / Longitude (drone-dji:Latitude, dwc:decimalLatitude). */
const POSITION_WORDS = "gps|latitude|longitude";
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/**
 * The most metadata blocks of a file that are read, and entries of a TIFF directory: a camera writes a few blocks
 * (one per picture of an MPO) of directories of tens of entries. Without them a hostile file of many EXIF headers
 * pointing at one directory of 65,535 entries cost 40 minutes of the event loop (a hostile review's 50 MB AVIF).
 */
const MAX_BLOCKS = 64;
const MAX_ENTRIES = 1024;

function metadataBlocks(buf: Buffer): Block[] {
  return allMetadataBlocks(buf).slice(0, MAX_BLOCKS);
}

function allMetadataBlocks(buf: Buffer): Block[] {
  if (buf[0] === 0xff && buf[1] === 0xd8) return jpegBlocks(buf);
  if (buf.subarray(0, 8).equals(PNG_SIGNATURE)) return pngBlocks(buf);
  if (ascii(buf, 0, 4) === "RIFF" && ascii(buf, 8, 12) === "WEBP") return webpBlocks(buf);
  // A TIFF file's XMP is a tag's value (700), and a GIF's an application extension written as plain text.
  if (isTiff(buf, 0)) return [{ kind: "tiff", start: 0, end: buf.length }, ...xmpPackets(buf)];
  if (ascii(buf, 4, 8) === "ftyp") return heifBlocks(buf);
  if (ascii(buf, 0, 4) === "GIF8") return xmpPackets(buf);
  return [];
}

/**
 * The segments before the image data (SOS): APP1 holds EXIF ("Exif\0\0") and XMP. A file of several pictures (MPO,
 * as stereo and some phone cameras write) holds each one's segments after the one before: found by their headers.
 */
function jpegBlocks(buf: Buffer): Block[] {
  const blocks = jpegSegments(buf, 2);
  const seen = new Set(blocks.map((b) => b.start));
  // An APP1 header anywhere else: FF E1 cannot occur inside compressed image data (an FF there is followed by 00).
  for (const header of [EXIF_HEADER, XMP_JPEG])
    for (let at = buf.indexOf(header, 2, "latin1"); at >= 0 && blocks.length < MAX_BLOCKS; at = buf.indexOf(header, at + 1, "latin1"))
      if (at >= 4 && buf[at - 4] === 0xff && buf[at - 3] === 0xe1)
        for (const b of jpegSegments(buf, at - 4, 1))
          if (!seen.has(b.start)) {
            seen.add(b.start);
            blocks.push(b);
          }
  return blocks;
}

/** From a marker at `i`: the APP1 blocks of up to `most` segments, stopping at the image data (SOS) or the end. */
function jpegSegments(buf: Buffer, i: number, most = Infinity): Block[] {
  const blocks: Block[] = [];
  for (let n = 0; n < most && i + 4 <= buf.length && buf[i] === 0xff; n++) {
    const marker = buf[i + 1]!;
    if (marker === 0xff) {
      i += 1; // a fill byte
      n -= 1;
      continue;
    }
    if (marker === 0xda || marker === 0xd9) break;
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      i += 2;
      continue;
    }
    const start = i + 4;
    const end = i + 2 + buf.readUInt16BE(i + 2);
    if (end > buf.length || end < start) break;
    if (marker === 0xe1) {
      if (buf.subarray(start, start + 6).equals(EXIF_HEADER)) blocks.push({ kind: "tiff", start: start + 6, end });
      else if (ascii(buf, start, start + XMP_JPEG.length) === XMP_JPEG) blocks.push({ kind: "xmp", start: start + XMP_JPEG.length, end });
    }
    i = end;
  }
  return blocks;
}

function pngBlocks(buf: Buffer): Block[] {
  const blocks: Block[] = [];
  let i = 8;
  while (i + 12 <= buf.length) {
    const length = buf.readUInt32BE(i);
    const type = ascii(buf, i + 4, i + 8);
    const start = i + 8;
    const end = start + length;
    if (end + 4 > buf.length || type === "IEND") break;
    // XMP and everything else that may state a position goes whole (pngChunksToDrop).
    if (type === "eXIf" && isTiff(buf, start)) blocks.push({ kind: "tiff", start, end, pngChunk: i });
    i = end + 4;
  }
  return blocks;
}

/**
 * PNG chunks kept as they are: the critical ones, and the registered ancillary ones that describe the pixels (colour,
 * transparency, density, animation) and hold no metadata text. eXIf (its TIFF GPS directory edited in place) and plain
 * text (tEXt, uncompressed iTXt, unless XMP or a raw profile) are judged one by one.
 */
const PNG_KEPT = new Set(
  "IHDR PLTE IDAT IEND tRNS gAMA cHRM sRGB iCCP sBIT bKGD hIST pHYs sPLT tIME cICP mDCv cLLi acTL fcTL fdAT".split(" "),
);
/**
 * Keywords of text chunks that go: those readers (ExifTool, exiv2) take as metadata (XMP, ImageMagick's raw profiles),
 * and any naming a position. ImageMagick 6 writes each EXIF tag of a photo it converts as a text chunk of its own,
 * "exif:GPSLatitude" = "51/1, 30/1, 264/10" (seen in `convert photo.jpg photo.png`, tests/fixtures/positions).
 */
const METADATA_KEYWORD = new RegExp(`^(xml:com\\.adobe\\.xmp|raw profile type .*)$|${POSITION_WORDS}`, "i");

/**
 * The PNG chunks (from their length field to past their CRC, in file order) that go whole, unread, when a file keeps
 * no position: a position can hide in compressed text (zTXt, compressed iTXt: ImageMagick's "Raw profile type exif",
 * XMP), in hexadecimal raw profiles, in XMP (any packet: one in UTF-16, or naming drone-dji:Latitude, holds one
 * without the letters "gps", and a lexer here would miss some way of writing a value that readers accept), in an eXIf
 * that is not plain TIFF, in private chunks (zxIf, tXMP, caBX…), after IEND, and in a chunk cut short (every byte from
 * it on goes). Nothing is inflated or parsed: no file can make this cost more than one pass over its bytes.
 */
function pngChunksToDrop(buf: Buffer): { start: number; end: number }[] {
  if (!buf.subarray(0, 8).equals(PNG_SIGNATURE)) return [];
  const drops: { start: number; end: number }[] = [];
  let i = 8;
  while (i + 12 <= buf.length) {
    const type = ascii(buf, i + 4, i + 8);
    const start = i + 8;
    const end = start + buf.readUInt32BE(i);
    if (end + 4 > buf.length) break;
    if (!keptChunk(type, buf, start, end)) {
      const last = drops.at(-1);
      if (last?.end === i)
        last.end = end + 4; // one range for chunks that go one after another
      else drops.push({ start: i, end: end + 4 });
    }
    i = end + 4;
    if (type === "IEND") break;
  }
  // Whatever follows IEND, a chunk cut short, stray bytes: nothing a reader of the picture needs.
  if (i < buf.length) drops.push({ start: i, end: buf.length });
  return drops;
}

function keptChunk(type: string, buf: Buffer, start: number, end: number): boolean {
  if (PNG_KEPT.has(type)) return true;
  if (type === "eXIf") return isTiff(buf, start);
  if (type !== "tEXt" && type !== "iTXt") return false;
  // keyword\0 (1–79 characters), then for iTXt a compression flag, a method, language\0, translated keyword\0, text.
  const keywordEnd = buf.subarray(start, Math.min(end, start + 80)).indexOf(0);
  if (keywordEnd < 1) return false;
  const keyword = ascii(buf, start, start + keywordEnd);
  if (type === "iTXt" && buf[start + keywordEnd + 1] !== 0) return false;
  return !METADATA_KEYWORD.test(keyword);
}

function webpBlocks(buf: Buffer): Block[] {
  const blocks: Block[] = [];
  let i = 12;
  while (i + 8 <= buf.length) {
    const type = ascii(buf, i, i + 4);
    const start = i + 8;
    const end = start + buf.readUInt32LE(i + 4);
    if (end > buf.length) break;
    if (type === "EXIF") blocks.push({ kind: "tiff", start: buf.subarray(start, start + 6).equals(EXIF_HEADER) ? start + 6 : start, end });
    if (type === "XMP ") blocks.push({ kind: "xmp", start, end });
    i = end + ((end - start) % 2);
  }
  return blocks;
}

/** HEIF and AVIF keep EXIF as an item in the media data; its payload starts "Exif\0\0" and then the TIFF header. */
function heifBlocks(buf: Buffer): Block[] {
  const blocks: Block[] = [];
  for (let at = buf.indexOf(EXIF_HEADER); at >= 0 && blocks.length < MAX_BLOCKS; at = buf.indexOf(EXIF_HEADER, at + 1))
    if (isTiff(buf, at + 6)) blocks.push({ kind: "tiff", start: at + 6, end: buf.length });
  return [...blocks, ...xmpPackets(buf)];
}

/** Every XMP packet written as text anywhere in the file (`<x:xmpmeta` … `</x:xmpmeta>`). */
function xmpPackets(buf: Buffer): Block[] {
  const blocks: Block[] = [];
  for (
    let at = buf.indexOf("<x:xmpmeta", 0, "latin1");
    at >= 0 && blocks.length < MAX_BLOCKS;
    at = buf.indexOf("<x:xmpmeta", at + 1, "latin1")
  ) {
    const end = buf.indexOf("</x:xmpmeta>", at, "latin1");
    if (end < 0) break;
    blocks.push({ kind: "xmp", start: at, end });
    at = end;
  }
  return blocks;
}

const isTiff = (buf: Buffer, at: number) =>
  at + 8 <= buf.length &&
  ((buf[at] === 0x49 && buf[at + 1] === 0x49 && buf[at + 2] === 42 && buf[at + 3] === 0) ||
    (buf[at] === 0x4d && buf[at + 1] === 0x4d && buf[at + 2] === 0 && buf[at + 3] === 42));

const GPS_POINTER = 0x8825;
// Bytes per value of each TIFF type (1 BYTE … 13 IFD); a value over four bytes lies elsewhere, at an offset.
const TYPE_BYTES = [0, 1, 1, 2, 4, 8, 1, 1, 2, 4, 8, 4, 8, 4];

/**
 * Whether the TIFF structure in `b` points to a GPS directory. With `blank`, the pointer's entry is taken out of its
 * directory (the entries after it move up; offsets count from the TIFF header, so nothing else moves) and the GPS
 * directory and the values it points to are zeroed.
 */
function gpsDirectory(buf: Buffer, b: Block, blank: boolean): boolean {
  const t = b.start;
  if (!isTiff(buf, t)) return false;
  const le = buf[t] === 0x49;
  const u16 = (o: number) => (le ? buf.readUInt16LE(o) : buf.readUInt16BE(o));
  const u32 = (o: number) => (le ? buf.readUInt32LE(o) : buf.readUInt32BE(o));
  const inside = (o: number, n: number) => o >= t && o + n <= b.end;
  // The GPS directory's entries and next-directory offset, and every value its entries point to, as far as they lie
  // inside and away from `keep` (the TIFF header and the directory holding the pointer, which a hostile offset may name).
  const zeroDirectory = (at: number, keep: [number, number]) => {
    const zero = (from: number, to: number) => {
      if (from >= t + 8 && to <= b.end && (to <= keep[0] || from >= keep[1])) buf.fill(0, from, to);
    };
    if (!inside(at, 2)) return;
    const count = u16(at);
    // Only what reads as a GPS directory (EXIF defines 32 tags, 0–31): a hostile offset naming anything else
    // (another directory, the values of one) loses its pointer and nothing else.
    if (count > 64 || !inside(at, 2 + 12 * count)) return;
    for (let k = 0; k < count; k++) if (u16(at + 2 + 12 * k) > 0x1f) return;
    for (let k = 0; k < count; k++) {
      const entry = at + 2 + 12 * k;
      const bytes = (TYPE_BYTES[u16(entry + 2)] ?? 0) * u32(entry + 4);
      const value = t + u32(entry + 8);
      if (bytes > 4) zero(value, value + bytes);
    }
    zero(at, Math.min(at + 2 + 12 * count + 4, b.end));
  };
  let found = false;
  // IFD0 holds the pointer; a few writers put it in IFD1 (the thumbnail's) too. At most four directories: no loops.
  let ifd = u32(t + 4);
  for (let hop = 0; ifd && hop < 4; hop++) {
    const at = t + ifd;
    if (!inside(at, 2)) break;
    const count = u16(at);
    const entriesEnd = at + 2 + 12 * count;
    if (count > MAX_ENTRIES || !inside(at, 2 + 12 * count + 4)) break;
    const next = u32(entriesEnd);
    for (let k = 0; k < count; k++) {
      const entry = at + 2 + 12 * k;
      if (u16(entry) !== GPS_POINTER) continue;
      found = true;
      if (blank) {
        zeroDirectory(t + u32(entry + 8), [at, entriesEnd + 4]);
        buf.copyWithin(entry, entry + 12, entriesEnd + 4);
        buf.fill(0, entriesEnd - 8, entriesEnd + 4);
        if (le) buf.writeUInt16LE(count - 1, at);
        else buf.writeUInt16BE(count - 1, at);
      }
      break;
    }
    ifd = next;
  }
  return found;
}

/** Whether the XMP packet in `b` states a position; with `blank`, each such value becomes spaces (same length, still XML). */
function xmpPositions(buf: Buffer, b: Block, blank: boolean): boolean {
  // latin1: one character per byte, so an index in the text is the byte's.
  const text = ascii(buf, b.start, b.end);
  let found = false;
  for (const value of gpsValues(text)) {
    found = true;
    if (!blank) break;
    buf.fill(0x20, b.start + value.start, b.start + value.end);
  }
  return found;
}

const GPS = new RegExp(POSITION_WORDS, "gi");
const ATTRIBUTE_REST = /\w*\s*=\s*(["'])/y;
const ELEMENT_REST = /\w*(?:\s[^<>]{0,200})?>/y;
const MAX_VALUE = 256;

/**
 * The values of XMP properties whose name holds GPS, Latitude or Longitude (exif:GPSLatitude, drone-dji:GpsLongitude,
 * drone-dji:Latitude, dwc:decimalLatitude), as attributes (`name="value"`) or elements (`<name>value</name>`); empty
 * ones are none. Each is found from such a word in the text by looking a bounded way around it, never by a pattern
 * that backtracks: linear in the packet, whatever it holds.
 */
function* gpsValues(text: string): Generator<{ start: number; end: number }> {
  GPS.lastIndex = 0;
  for (let m = GPS.exec(text); m; m = GPS.exec(text)) {
    // The property's local name starts at most 64 characters before the word, after its prefix's colon.
    let local = m.index;
    while (local > 0 && m.index - local < 64 && /[\w-]/.test(text[local - 1]!)) local -= 1;
    if (text[local - 1] !== ":" || !/[\w-]/.test(text[local - 2] ?? "")) continue;
    const after = m.index + m[0].length;
    ATTRIBUTE_REST.lastIndex = after;
    const attribute = ATTRIBUTE_REST.exec(text);
    let start = -1;
    let end = -1;
    if (attribute) {
      start = ATTRIBUTE_REST.lastIndex;
      end = text.indexOf(attribute[1]!, start);
    } else {
      let name = local - 1;
      while (name > 0 && local - name < 64 && /[\w-]/.test(text[name - 1]!)) name -= 1;
      ELEMENT_REST.lastIndex = after;
      if (text[name - 1] === "<" && ELEMENT_REST.exec(text)) {
        start = ELEMENT_REST.lastIndex;
        end = text.indexOf("<", start);
      }
    }
    if (end > start && end - start <= MAX_VALUE && text.slice(start, end).trim()) yield { start, end };
  }
}
