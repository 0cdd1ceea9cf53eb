import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readSidecar } from "../../cli/sidecar";
import { decodeText, unreadableAt } from "~/lib/text-encoding";
import { fileEncoding, utf8Stream } from "~/lib/text-file.server";
import { ManifestUnreadable, parseManifest } from "~/lib/wsc-manifest";

/**
 * Every CSV the product reads (the attribute import, the CLI's sidecars, a WSC manifest) in the encoding it came in:
 * UTF-8 with or without BOM, UTF-16 with BOM, Windows-1252 when the bytes are not UTF-8; never a silent U+FFFD.
 */
const dir = mkdtempSync(path.join(tmpdir(), "koala-encoding-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const fileOf = (bytes: Buffer | string) => {
  const file = path.join(dir, `f-${n++}.csv`);
  writeFileSync(file, bytes);
  return file;
};
/** Windows-1252 bytes of Latin-1 text (and €). */
const CP1252: Record<string, number> = { "€": 0x80, "“": 0x93, "”": 0x94 };
const cp1252 = (text: string) => Buffer.from([...text].map((c) => CP1252[c] ?? c.charCodeAt(0)));

describe("text in its encoding", () => {
  it("decodes a file held in memory: BOMs believed, UTF-8 when valid, else Windows-1252", () => {
    expect(decodeText(Buffer.from("Café €"))).toEqual({ text: "Café €", encoding: "utf-8" });
    expect(decodeText(Buffer.from("\uFEFFCafé"))).toEqual({ text: "Café", encoding: "utf-8" });
    expect(decodeText(Buffer.from("\uFEFFCafé", "utf16le"))).toEqual({ text: "Café", encoding: "utf-16le" });
    expect(decodeText(Buffer.from("\uFEFFCafé", "utf16le").swap16())).toEqual({ text: "Café", encoding: "utf-16be" });
    expect(decodeText(cp1252("Café € ÿ “quoted”"))).toEqual({ text: "Café € ÿ “quoted”", encoding: "windows-1252" });
    // A byte Windows-1252 leaves undefined is not read as a control character: it cannot be read.
    expect(decodeText(Buffer.from([0x43, 0x81, 0xe9])).text).toBe("C\uFFFDé");
  });

  it("names the line of the first character that cannot be read (U+FFFD, NUL), or none", () => {
    expect(unreadableAt("a\nb\nc")).toBeNull();
    expect(unreadableAt("a\nb\nC\uFFFDf\nx\uFFFD")).toBe(3);
    expect(unreadableAt("a\u0000")).toBe(1);
  });

  it("finds a file's encoding by streaming it, a character cut by a chunk's end included", async () => {
    // A 2-, 3- and 4-byte character placed across the 64 KiB boundary of the read stream's chunks.
    for (const char of ["é", "€", "😀"]) {
      const bytes = Buffer.concat([Buffer.alloc(65_536 - 1, "a"), Buffer.from(`${char}\n`)]);
      expect(await fileEncoding(fileOf(bytes)), char).toBe("utf-8");
    }
    expect(await fileEncoding(fileOf(Buffer.from("\uFEFFa,b", "utf16le")))).toBe("utf-16le");
    expect(await fileEncoding(fileOf(Buffer.concat([Buffer.alloc(200_000, "a"), cp1252("é")])))).toBe("windows-1252");
    // A file ending in the middle of a character is not UTF-8.
    expect(await fileEncoding(fileOf(Buffer.from("Caf\xc3", "latin1")))).toBe("windows-1252");
    // The stream of a Windows-1252 file is its text as UTF-8.
    const chunks: Buffer[] = [];
    for await (const chunk of utf8Stream(fileOf(cp1252("Café,€5,“q”\n")), "windows-1252")) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).toString("utf8")).toBe("Café,€5,“q”\n");
  });

  it("never holds a large file in memory to find or convert its encoding (128 MB, Latin-1 at its very end)", async () => {
    const file = path.join(dir, "large.csv");
    const handle = await open(file, "w");
    const block = Buffer.alloc(1024 * 1024, "12345,Region value,Another value\n");
    for (let i = 0; i < 128; i++) await handle.write(block);
    await handle.write(cp1252("99,Café\n"));
    await handle.close();
    let peak = 0;
    const base = process.memoryUsage().arrayBuffers;
    const sample = setInterval(() => (peak = Math.max(peak, process.memoryUsage().arrayBuffers - base)), 1);
    try {
      expect(await fileEncoding(file)).toBe("windows-1252");
      let bytes = 0;
      for await (const chunk of utf8Stream(file, "windows-1252")) bytes += (chunk as Buffer).length;
      expect(bytes).toBe(128 * 1024 * 1024 + "99,Café\n".length + 1);
    } finally {
      clearInterval(sample);
    }
    // Chunks of 64 KiB (those not yet collected among them): never the file's 128 MB at once.
    expect(peak).toBeLessThan(64 * 1024 * 1024);
  });

  it("reads a CLI sidecar in its encoding, and refuses one that cannot be read, naming the line", async () => {
    const latin = await readSidecar(fileOf(cp1252('file,title,keywords\na.jpg,Café crème,"thé,café"\n')));
    expect(latin.get("a.jpg")).toMatchObject({ title: "Café crème", keywords: ["thé", "café"] });
    const utf16 = await readSidecar(fileOf(Buffer.from("\uFEFFfile,title\nb.jpg,Zürich\n", "utf16le")));
    expect(utf16.get("b.jpg")).toMatchObject({ title: "Zürich" });
    const broken = fileOf(Buffer.concat([Buffer.from("\uFEFFfile,title\nc.jpg,ok\nd.jpg,Caf"), Buffer.from([0xe9, 0x0a])]));
    await expect(readSidecar(broken)).rejects.toThrow(/^f-\d+\.csv, line 3: Characters here could not be read/);
  });

  it("reads a WSC manifest in its encoding, and refuses one that cannot be read, naming the line", () => {
    const { entries } = parseManifest(cp1252("url,title\nhttps://img.example/a.jpg,Café\n"), "text/csv");
    expect(entries).toMatchObject([{ url: "https://img.example/a.jpg", title: "Café" }]);
    expect(() =>
      parseManifest(Buffer.from("url,title\nhttps://img.example/a.jpg,ok\nhttps://img.example/b.jpg,\uFFFD\n"), "text/csv"),
    ).toThrow(
      new ManifestUnreadable(
        "Line 3 of the manifest: Characters here could not be read (the file is not UTF-8, UTF-16 or Windows-1252 text): save it as CSV UTF-8 and try again.",
      ),
    );
  });
});
