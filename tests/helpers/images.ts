import { deflateSync } from "node:zlib";
import sharp from "sharp";

/** Real image files made on the fly for tests. */
export const jpeg = (w = 64, h = 48, color = "#3366cc") =>
  sharp({ create: { width: w, height: h, channels: 3, background: color } })
    .jpeg()
    .toBuffer();
export const png = (w = 64, h = 48) =>
  sharp({ create: { width: w, height: h, channels: 4, background: "#ff000080" } })
    .png()
    .toBuffer();
export const webp = () =>
  sharp({ create: { width: 32, height: 32, channels: 3, background: "#00ff00" } })
    .webp()
    .toBuffer();
export const gif = () =>
  sharp({ create: { width: 16, height: 16, channels: 3, background: "#0000ff" } })
    .gif()
    .toBuffer();
export const tiff = () =>
  sharp({ create: { width: 16, height: 16, channels: 3, background: "#888888" } })
    .tiff()
    .toBuffer();

/**
 * A real PNG of 30000×30000 one-bit pixels: a few hundred kilobytes on disk, 900 megapixels decoded
 * (a decompression bomb). Built by hand, since sharp itself refuses to make one.
 */
export function pngBomb(size = 30000): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(size, 0);
  ihdr.writeUInt32BE(size, 4);
  ihdr[8] = 1; // bit depth
  ihdr[9] = 0; // greyscale
  const raw = Buffer.alloc((1 + Math.ceil(size / 8)) * size); // filter byte + zero pixels per row
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk("IHDR", ihdr),
    pngChunk("IDAT", deflateSync(raw, { level: 9 })),
    pngChunk("IEND", Buffer.alloc(0)),
  ]);
}

/** One PNG chunk: length, type, data, CRC. */
export function pngChunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}

/** A PNG with `chunks` put after its header chunk (IHDR: the first 8 + 25 bytes). */
export const withPngChunks = (png: Buffer, ...chunks: Buffer[]) => Buffer.concat([png.subarray(0, 33), ...chunks, png.subarray(33)]);

/** A JPEG's EXIF block ("Exif\0\0" and the TIFF structure after it), as its APP1 segment holds it. */
export function exifBlockOf(jpeg: Buffer): Buffer {
  const at = jpeg.indexOf("Exif\0\0", 0, "latin1");
  return jpeg.subarray(at, at - 2 + jpeg.readUInt16BE(at - 2));
}

/**
 * EXIF as ImageMagick keeps it in a PNG made from a photo: hexadecimal text ("\nexif\n<length>\n<hex lines>") under the
 * keyword "Raw profile type exif", deflated in a zTXt chunk or plain in tEXt.
 */
export function rawExifProfile(exif: Buffer, type: "zTXt" | "tEXt"): Buffer {
  const hex = exif.toString("hex").replace(/.{1,72}/g, "$&\n");
  const text = Buffer.from(`\nexif\n${String(exif.length).padStart(8)}\n${hex}`, "latin1");
  const keyword = Buffer.from("Raw profile type exif\0", "latin1");
  return pngChunk(type, type === "zTXt" ? Buffer.concat([keyword, Buffer.from([0]), deflateSync(text)]) : Buffer.concat([keyword, text]));
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(buf: Buffer): number {
  let c = 0xffffffff;
  for (const b of buf) c = CRC_TABLE[(c ^ b) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/**
 * A real JPEG of noise (each call a different picture) carrying EXIF as a camera writes it (libvips' own EXIF writer):
 * the capture time ("YYYY:MM:DD HH:MM:SS"),
 * the camera, a GPS position in degrees and an orientation tag, each only when given.
 */
export function photo(
  exif: { taken?: string; make?: string; model?: string; gps?: { lat: number; lon: number }; orientation?: number },
  w = 64,
  h = 48,
) {
  const dms = (deg: number) => {
    const a = Math.abs(deg);
    const d = Math.floor(a);
    const m = Math.floor((a - d) * 60);
    const s = Math.round(((a - d) * 60 - m) * 60 * 10000);
    return `${d}/1 ${m}/1 ${s}/10000`;
  };
  const ifd0: Record<string, string> = {};
  if (exif.make) ifd0.Make = exif.make;
  if (exif.model) ifd0.Model = exif.model;
  const gps: Record<string, string> = exif.gps
    ? {
        GPSLatitudeRef: exif.gps.lat < 0 ? "S" : "N",
        GPSLatitude: dms(exif.gps.lat),
        GPSLongitudeRef: exif.gps.lon < 0 ? "W" : "E",
        GPSLongitude: dms(exif.gps.lon),
      }
    : {};
  // Noise, not one colour: a flat picture has no perceptual hash, and two photos made here are different pictures.
  const image = sharp({
    create: { width: w, height: h, channels: 3, background: "#808080", noise: { type: "gaussian", mean: 128, sigma: 40 } },
  }).withExif({
    IFD0: ifd0,
    IFD2: exif.taken ? { DateTimeOriginal: exif.taken } : {},
    IFD3: gps,
  });
  return (exif.orientation ? image.withMetadata({ orientation: exif.orientation }) : image).jpeg().toBuffer();
}
