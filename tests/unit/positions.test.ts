import exifr from "exifr";
import sharp from "sharp";
import { readFileSync } from "node:fs";
import { crc32, deflateSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { holdsPosition, withoutPosition } from "~/services/positions.server";
import { exifBlockOf, pngChunk, rawExifProfile, withPngChunks } from "../helpers/images";

/**
 * A photo's position taken out of its own bytes (projects that keep none): every container Koala accepts that carries
 * EXIF, and XMP; the rest of the file byte for byte; hostile metadata never throws and never grows or shrinks a file
 * (a PNG is the one exception: a chunk that could hold a position Koala does not read goes whole).
 */
const GPS = { GPSLatitudeRef: "N", GPSLatitude: "51/1 30/1 264/10", GPSLongitudeRef: "W", GPSLongitude: "0/1 7/1 40/1" };
const picture = () =>
  sharp({ create: { width: 40, height: 30, channels: 3, background: "#808080", noise: { type: "gaussian", mean: 128, sigma: 40 } } });
const located = (format: "jpeg" | "png" | "webp" | "avif") => {
  const tagged = picture().withExif({
    IFD0: { Make: "Canon", Model: "Canon EOS R6" },
    IFD2: { DateTimeOriginal: "2024:05:17 14:03:09" },
    IFD3: GPS,
  });
  return tagged[format]().toBuffer();
};

/** The EXIF of a file as a reader independent of Koala's finds it: exifr on the TIFF structure (it reads no WebP or AVIF). */
async function exifOf(buf: Buffer): Promise<Record<string, unknown>> {
  const exif = Buffer.from("Exif\0\0", "latin1");
  let tiff: Buffer = buf;
  for (let at = buf.indexOf(exif); at >= 0; at = buf.indexOf(exif, at + 1))
    if (/^(II\*\0|MM\0\*)$/.test(buf.toString("latin1", at + 6, at + 10))) {
      tiff = buf.subarray(at + 6);
      break;
    }
  return ((await exifr.parse(tiff, { gps: true, pick: undefined })) ?? {}) as Record<string, unknown>;
}
/** The tags of IFD0 of the TIFF structure at `t` (the GPS pointer is 0x8825). */
function ifd0Tags(buf: Buffer, t: number): number[] {
  const le = buf[t] === 0x49;
  const u16 = (o: number) => (le ? buf.readUInt16LE(o) : buf.readUInt16BE(o));
  const at = t + (le ? buf.readUInt32LE(t + 4) : buf.readUInt32BE(t + 4));
  return Array.from({ length: u16(at) }, (_, k) => u16(at + 2 + 12 * k));
}
/** Every PNG chunk's stored CRC against one computed here. */
function pngChunksIntact(buf: Buffer) {
  for (let i = 8; i + 12 <= buf.length;) {
    const end = i + 8 + buf.readUInt32BE(i);
    if (buf.readUInt32BE(end) !== crc32(buf.subarray(i + 4, end))) return false;
    i = end + 4;
  }
  return true;
}
const pixels = async (buf: Buffer) => (await sharp(buf).raw().toBuffer()).toString("base64");

describe("withoutPosition", () => {
  it.each(["jpeg", "png", "webp", "avif"] as const)(
    "takes the GPS directory out of a %s file, keeping its length, its pixels and its other tags",
    async (format) => {
      const buf = await located(format);
      expect(await exifOf(buf)).toMatchObject({ latitude: expect.closeTo(51.5073, 3), Make: "Canon" });
      expect(holdsPosition(buf)).toBe(true);

      const out = withoutPosition(buf);
      expect(out.length).toBe(buf.length);
      const after = await exifOf(out);
      expect(Object.keys(after).filter((k) => /gps|latitude|longitude/i.test(k))).toEqual([]);
      expect(after).toMatchObject({ Make: "Canon", Model: "Canon EOS R6" });
      expect(await pixels(out)).toBe(await pixels(buf));
      expect(holdsPosition(out)).toBe(false);
      // The same file always gives the same bytes (a second upload is found by its checksum), and the input is untouched.
      expect(withoutPosition(Buffer.from(buf)).equals(out)).toBe(true);
      expect(holdsPosition(buf)).toBe(true);
    },
  );

  it("takes the GPS directory out of a TIFF file's own first directory", async () => {
    const jpeg = await located("jpeg");
    const at = jpeg.indexOf("Exif\0\0", 0, "latin1");
    // The EXIF block is a TIFF structure in its own right: IFD0 with the camera and the GPS pointer.
    const tiff = Buffer.from(jpeg.subarray(at + 6, at + 4 + jpeg.readUInt16BE(at - 2)));
    expect(await exifr.parse(tiff)).toMatchObject({ latitude: expect.closeTo(51.5073, 3) });
    const out = withoutPosition(tiff);
    expect(out.length).toBe(tiff.length);
    const after = (await exifr.parse(out)) as Record<string, unknown>;
    expect(after).toMatchObject({ Make: "Canon" });
    expect(after.latitude).toBeUndefined();
    expect(after.GPSLatitude).toBeUndefined();
  });

  it("blanks XMP's GPS properties, as attributes and as elements, and leaves the rest of the packet", async () => {
    const xmp = `<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
<rdf:Description rdf:about="" xmlns:exif="http://ns.adobe.com/exif/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/"
 exif:GPSLatitude="51,30.44N" exif:GPSLongitude='0,7.6667W'><exif:GPSAltitude>1234/100</exif:GPSAltitude>
<dc:format>image/jpeg</dc:format></rdf:Description></rdf:RDF></x:xmpmeta>`;
    const buf = await picture().withXmp(xmp).jpeg().toBuffer();
    expect(holdsPosition(buf)).toBe(true);
    const out = withoutPosition(buf);
    expect(out.length).toBe(buf.length);
    const text = out.toString("latin1");
    for (const gone of ["51,30.44N", "0,7.6667W", "1234/100"]) expect(text).not.toContain(gone);
    expect(text).toMatch(/exif:GPSLatitude=" {9}" exif:GPSLongitude=' {9}'><exif:GPSAltitude> {8}<\/exif:GPSAltitude>/);
    expect(text).toContain("<dc:format>image/jpeg</dc:format>");
    expect(await pixels(out)).toBe(await pixels(buf));
  });

  it("finds XMP positions by any prefix and case, and by Latitude / Longitude without GPS (drone-dji, Darwin Core), in TIFF files too", async () => {
    const xmp = `<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
<rdf:Description drone-dji:GpsLatitude="+22.5430" drone-dji:GpsLongitude="+113.9560" drone-dji:AbsoluteAltitude="+40.1"
 drone-dji:Latitude="+22.5431" dwc:decimalLongitude="113.9561"><dwc:decimalLatitude>22.5432</dwc:decimalLatitude></rdf:Description>
</rdf:RDF></x:xmpmeta>`;
    for (const format of ["jpeg", "tiff"] as const) {
      const buf = await picture().withXmp(xmp)[format]().toBuffer();
      expect(buf.toString("latin1"), format).toContain("+22.5430");
      const out = withoutPosition(buf);
      expect(out.length).toBe(buf.length);
      const text = out.toString("latin1");
      for (const gone of ["+22.5430", "+113.9560", "+22.5431", "113.9561", "22.5432"]) expect(text, format).not.toContain(gone);
      expect(text, format).toContain('drone-dji:AbsoluteAltitude="+40.1"');
      expect(await pixels(out)).toBe(await pixels(buf));
    }
  });

  it("takes the positions out of every picture of a multi-picture JPEG (MPO), not only the first", async () => {
    const frame = await located("jpeg");
    const mpo = Buffer.concat([frame, frame]);
    const out = withoutPosition(mpo);
    expect(out.length).toBe(mpo.length);
    for (const part of [out.subarray(0, frame.length), out.subarray(frame.length)]) {
      const after = await exifOf(part);
      expect(after).toMatchObject({ Make: "Canon" });
      expect(after.latitude).toBeUndefined();
    }
  });

  it("reads a packet of hostile XMP in time linear in its length (a pattern that backtracks would take hours)", async () => {
    // 4 MB of what a careless pattern retries from every position: word characters without a colon, then
    // "x:gps" without a value, many times.
    const junk = "a".repeat(2_000_000) + "x:gps".repeat(400_000);
    const buf = await picture().withXmp(`<x:xmpmeta xmlns:x="adobe:ns:meta/">${junk}</x:xmpmeta>`).jpeg().toBuffer();
    expect(withoutPosition(buf)).toBe(buf);
  });

  it("removes only the pointer when a hostile one names the TIFF header or the directory holding it", async () => {
    const jpeg = await located("jpeg");
    const t = jpeg.indexOf("Exif\0\0", 0, "latin1") + 6;
    const tags = ifd0Tags(jpeg, t);
    const le = jpeg[t] === 0x49;
    const ifd = le ? jpeg.readUInt32LE(t + 4) : jpeg.readUInt32BE(t + 4);
    for (const target of [0, ifd]) {
      const bad = Buffer.from(jpeg);
      const entry = t + ifd + 2 + 12 * tags.indexOf(0x8825);
      if (le) bad.writeUInt32LE(target, entry + 8);
      else bad.writeUInt32BE(target, entry + 8);
      const out = withoutPosition(bad);
      expect(ifd0Tags(out, t)).toEqual(tags.filter((tag) => tag !== 0x8825));
      expect(await exifOf(out)).toMatchObject({ Make: "Canon", Model: "Canon EOS R6" });
    }
  });

  it("gives back the very same buffer for a file that states no position", async () => {
    const plain = await picture()
      .withExif({ IFD0: { Make: "Canon" } })
      .jpeg()
      .toBuffer();
    expect(withoutPosition(plain)).toBe(plain);
    const bare = await picture().png().toBuffer();
    expect(withoutPosition(bare)).toBe(bare);
    expect(withoutPosition(Buffer.from("GIF89a not much else", "latin1")).toString("latin1")).toBe("GIF89a not much else");
  });

  it("keeps PNG's chunk checksums right after the edit", async () => {
    const buf = await located("png");
    expect(pngChunksIntact(buf)).toBe(true);
    const out = withoutPosition(buf);
    expect(out.equals(buf)).toBe(false);
    expect(pngChunksIntact(out)).toBe(true);
  });

  it("takes the GPS pointer itself out of IFD0, leaving every other entry in its order", async () => {
    const buf = await located("jpeg");
    const t = buf.indexOf("Exif\0\0", 0, "latin1") + 6;
    const tags = ifd0Tags(buf, t);
    expect(tags).toContain(0x8825);
    expect(tags).toContain(0x8769); // the Exif directory's pointer (capture time)
    expect(ifd0Tags(withoutPosition(buf), t)).toEqual(tags.filter((tag) => tag !== 0x8825));

    // Wherever it sits: moved to the front (writers do not all sort their entries), the entries after it move up.
    const moved = Buffer.from(buf);
    const le = moved[t] === 0x49;
    const ifd = t + (le ? moved.readUInt32LE(t + 4) : moved.readUInt32BE(t + 4));
    const gpsAt = ifd + 2 + 12 * tags.indexOf(0x8825);
    const entry = Buffer.from(moved.subarray(gpsAt, gpsAt + 12));
    moved.copyWithin(ifd + 14, ifd + 2, gpsAt);
    entry.copy(moved, ifd + 2);
    const frontTags = ifd0Tags(moved, t);
    expect(frontTags[0]).toBe(0x8825);
    const out = withoutPosition(moved);
    expect(ifd0Tags(out, t)).toEqual(frontTags.slice(1));
    expect(await exifOf(out)).toMatchObject({ Make: "Canon", DateTimeOriginal: expect.any(Date) });
    expect((await exifOf(out)).latitude).toBeUndefined();
  });

  describe("PNG: every chunk that could hold a position Koala does not read goes whole, unread", () => {
    const pngWith = async (...extra: Buffer[]) => withPngChunks(await picture().png().toBuffer(), ...extra);
    const XMP = (gps: boolean) =>
      `<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description ` +
      `xmlns:exif="http://ns.adobe.com/exif/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/" dc:format="image/png"` +
      `${gps ? ' exif:GPSLatitude="51,30.5N" exif:GPSLongitude="0,7.5W"' : ""}/></rdf:RDF></x:xmpmeta>`;
    const latin1 = (text: string) => Buffer.from(text, "latin1");
    const itxt = (keyword: string, flag: number, text: Buffer) =>
      pngChunk("iTXt", Buffer.concat([latin1(`${keyword}\0`), Buffer.from([flag, 0, 0, 0]), text]));
    const exif = async (gps: boolean) =>
      exifBlockOf(
        await picture()
          .withExif({ IFD0: { Make: "Canon" }, ...(gps ? { IFD3: GPS } : {}) })
          .jpeg()
          .toBuffer(),
      );
    const located = async () => exif(true);
    const tiff = async () => (await located()).subarray(6);

    // Each as a reader such as ExifTool would find a position in it (a hostile review's list): none is read here.
    it.each([
      ["compressed XMP (iTXt, flag 1)", async () => itxt("XML:com.adobe.xmp", 1, deflateSync(latin1(XMP(true))))],
      ["XMP behind another compression flag (2)", async () => itxt("XML:com.adobe.xmp", 2, deflateSync(latin1(XMP(true))))],
      ["compressed XMP that states nothing at all", async () => itxt("XML:com.adobe.xmp", 1, deflateSync(latin1(XMP(false))))],
      ["plain XMP naming GPS", async () => itxt("XML:com.adobe.xmp", 0, latin1(XMP(true)))],
      [
        "plain XMP naming nothing of the kind (UTF-16 XMP, or drone-dji:Latitude, holds a position without 'gps')",
        async () => itxt("XML:com.adobe.xmp", 0, latin1(XMP(false))),
      ],
      ["XMP in UTF-16", async () => itxt("XML:com.adobe.xmp", 0, Buffer.from(XMP(true), "utf16le"))],
      ["XMP under its keyword in another case, in tEXt", async () => pngChunk("tEXt", latin1(`xML:com.adobe.xmp\0${XMP(true)}`))],
      ["a deflated raw EXIF profile (zTXt, ImageMagick's)", async () => rawExifProfile(await located(), "zTXt")],
      ["a plain raw EXIF profile (tEXt)", async () => rawExifProfile(await located(), "tEXt")],
      ["a raw profile stating no position", async () => rawExifProfile(await exif(false), "tEXt")],
      ["a raw 8BIM profile", async () => pngChunk("tEXt", latin1("Raw profile type 8bim\0\n8bim\n      4\n3842494d\n"))],
      [
        "any zTXt, whatever its keyword",
        async () => pngChunk("zTXt", Buffer.concat([latin1("Description\0\0"), deflateSync(latin1("here"))])),
      ],
      [
        "an eXIf that is not plain TIFF (deflated)",
        async () => pngChunk("eXIf", Buffer.concat([Buffer.from([0]), deflateSync(await tiff())])),
      ],
      ["a private chunk (zxIf)", async () => pngChunk("zxIf", deflateSync(await tiff()))],
      ["a private chunk (tXMP)", async () => pngChunk("tXMP", latin1(XMP(true)))],
    ])("drops %s whole", async (_, make) => {
      const chunk = await make();
      const buf = await pngWith(chunk, pngChunk("tEXt", latin1("Comment\0kept")), pngChunk("pHYs", Buffer.alloc(9)));
      expect(holdsPosition(buf)).toBe(true);
      const out = withoutPosition(buf);
      expect(out.length).toBe(buf.length - chunk.length);
      expect(out.includes(chunk)).toBe(false);
      expect(out.includes(latin1("Comment\0kept"))).toBe(true);
      expect(pngChunksIntact(out)).toBe(true);
      expect(await pixels(out)).toBe(await pixels(buf));
      expect(withoutPosition(out)).toBe(out); // nothing left to take
    });

    it("takes every trace of the position out of a PNG ImageMagick made from a geotagged photo (its eXIf, and its exif:GPS… text chunks)", async () => {
      const converted = readFileSync("tests/fixtures/positions/imagemagick-6.9-from-geotagged-jpeg.png");
      const textKeywords = (buf: Buffer) => {
        const found: string[] = [];
        for (let i = 8; i + 12 <= buf.length; i += 12 + buf.readUInt32BE(i))
          if (buf.toString("latin1", i + 4, i + 8) === "tEXt") found.push(buf.toString("latin1", i + 8, buf.indexOf(0, i + 8)));
        return found;
      };
      expect(textKeywords(converted)).toEqual(expect.arrayContaining(["exif:GPSLatitude", "exif:GPSLongitude", "exif:Make"]));
      expect(await exifr.gps(converted)).toMatchObject({ latitude: expect.closeTo(51.5073, 3) });
      expect(converted.toString("latin1")).toContain("51/1, 30/1, 264/10");

      const out = withoutPosition(converted);
      expect(textKeywords(out).filter((k) => /gps|latitude|longitude/i.test(k))).toEqual([]);
      expect(textKeywords(out)).toContain("exif:Make");
      expect(out.toString("latin1")).not.toContain("51/1, 30/1, 264/10");
      expect(await exifr.gps(out)).toBeUndefined();
      expect((await exifOf(out)).Make).toBe("Canon");
      expect(pngChunksIntact(out)).toBe(true);
      expect(await pixels(out)).toBe(await pixels(converted));
      expect(holdsPosition(out)).toBe(false);
    });

    it("drops whatever follows IEND, and keeps plain text and the chunks that describe the pixels", async () => {
      const plain = await pngWith(
        pngChunk("tEXt", latin1("Software\0GIMP")),
        itxt("Title", 0, latin1("Shelf")),
        pngChunk("pHYs", Buffer.alloc(9)),
        pngChunk("gAMA", Buffer.alloc(4)),
      );
      expect(holdsPosition(plain)).toBe(false);
      expect(withoutPosition(plain)).toBe(plain);
      const trailing = Buffer.concat([plain, rawExifProfile(await located(), "zTXt")]);
      expect(holdsPosition(trailing)).toBe(true);
      expect(withoutPosition(trailing).equals(plain)).toBe(true);
    });

    it("drops a deflate bomb, a broken stream and a cut chunk unread, and never throws", async () => {
      const bomb = itxt("XML:com.adobe.xmp", 1, deflateSync(Buffer.alloc(64 * 1024 * 1024, 0x20)));
      expect(bomb.length).toBeLessThan(100_000);
      const broken = [bomb, itxt("XML:com.adobe.xmp", 1, latin1("not deflate")), pngChunk("iTXt", latin1("XML:com.adobe.xmp\0\x01\0"))];
      for (const bad of broken) {
        const buf = await pngWith(bad);
        const out = withoutPosition(buf);
        expect(out.length).toBe(buf.length - bad.length);
        expect(await pixels(out)).toBe(await pixels(buf));
      }
    });
  });

  it("reads at most 64 metadata blocks of a file and directories of at most 1,024 entries (a hostile file's work is bounded)", async () => {
    const jpeg = await located("jpeg");
    const app1 = jpeg.indexOf("Exif\0\0", 0, "latin1") - 4;
    const segment = jpeg.subarray(app1, app1 + 2 + jpeg.readUInt16BE(app1 + 2));
    // 70 pictures' EXIF, each with a position: the first 64 lose theirs, the rest are not read.
    const many = Buffer.concat([jpeg.subarray(0, 2), ...Array.from({ length: 70 }, () => segment), jpeg.subarray(2)]);
    const out = withoutPosition(many);
    const stillLocated = (buf: Buffer) =>
      Array.from({ length: 70 }, (_, k) => ifd0Tags(buf, 2 + k * segment.length + 10).includes(0x8825)).filter(Boolean).length;
    expect(stillLocated(many)).toBe(70);
    expect(stillLocated(out)).toBe(6);
    // A directory of more than 1,024 entries is not read: its pointer stays (a camera writes tens).
    const tiffWith = (entries: number) => {
      const gpsAt = 8 + 2 + 12 * entries + 4;
      const buf = Buffer.alloc(gpsAt + 2 + 12 + 4);
      buf.write("II*\0", 0, "latin1");
      buf.writeUInt32LE(8, 4);
      buf.writeUInt16LE(entries, 8);
      for (let k = 0; k < entries; k++) buf.writeUInt16LE(k === entries - 1 ? 0x8825 : 0x0100 + (k % 200), 10 + 12 * k);
      const pointer = 10 + 12 * (entries - 1);
      buf.writeUInt16LE(4, pointer + 2); // LONG
      buf.writeUInt32LE(1, pointer + 4);
      buf.writeUInt32LE(gpsAt, pointer + 8);
      buf.writeUInt16LE(1, gpsAt); // one GPS entry: GPSLatitudeRef "N"
      buf.writeUInt16LE(1, gpsAt + 2);
      buf.writeUInt16LE(2, gpsAt + 4);
      buf.writeUInt32LE(2, gpsAt + 6);
      buf.write("N\0", gpsAt + 10, "latin1");
      return buf;
    };
    expect(holdsPosition(tiffWith(1024))).toBe(true);
    expect(holdsPosition(tiffWith(1025))).toBe(false);
  });

  it("never throws on hostile metadata, and never changes a file's length but for a PNG's unreadable chunks", async () => {
    const jpeg = await located("jpeg");
    const exifAt = jpeg.indexOf("Exif\0\0", 0, "latin1") + 6;
    // Offsets pointing anywhere: past the end, into the header, at themselves.
    const seeded = (seed: number) => () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const rnd = seeded(7);
    for (let round = 0; round < 500; round++) {
      const bad = Buffer.from(jpeg);
      for (let k = 0; k < 4; k++) bad[exifAt + Math.floor(rnd() * 200)] = Math.floor(rnd() * 256);
      const out = withoutPosition(bad);
      expect(out.length).toBe(bad.length);
    }
    // An APP1 segment that claims more bytes than the file has; a PNG chunk that does the same.
    const long = Buffer.from(jpeg);
    long.writeUInt16BE(0xffff, exifAt - 8);
    expect(withoutPosition(long)).toBe(long);
    const png = await located("png");
    const eXIf = png.indexOf("eXIf", 0, "latin1") - 4;
    const cut = png.subarray(0, eXIf + 24);
    // A PNG's chunk cut short cannot be read, so it goes, with every byte after it (the one way a file shrinks here).
    expect(withoutPosition(cut).equals(cut.subarray(0, eXIf))).toBe(true);
  });
});
