import { isUtf8 } from "node:buffer";
import { createReadStream } from "node:fs";
import { open } from "node:fs/promises";
import { Transform, type Readable } from "node:stream";
import { byteOrderMark, type TextEncodingName, windows1252FromLatin1 } from "./text-encoding";

/**
 * A text file on disk (an uploaded CSV of up to 100 MB) read in its own encoding without holding it whole: the
 * encoding is found from a byte-order mark, else by a streamed UTF-8 check (native, ~10 ms for 100 MB) that stops at
 * the first byte UTF-8 cannot have, and the file is then read as UTF-8 (as it is, or decoded chunk by chunk).
 */
export async function fileEncoding(file: string): Promise<TextEncodingName> {
  const handle = await open(file, "r");
  const head = Buffer.alloc(3);
  try {
    await handle.read(head, 0, 3, 0);
  } finally {
    await handle.close();
  }
  const bom = byteOrderMark(head);
  if (bom) return bom.encoding;
  let carry: Buffer = Buffer.alloc(0);
  for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
    const bytes = carry.length ? Buffer.concat([carry, chunk]) : chunk;
    // A character the chunk cuts in two is checked with the next chunk.
    const keep = cutShort(bytes);
    if (!isUtf8(bytes.subarray(0, bytes.length - keep))) return "windows-1252";
    carry = Buffer.from(bytes.subarray(bytes.length - keep));
  }
  return carry.length ? "windows-1252" : "utf-8";
}

/** How many bytes at the end of `bytes` begin a UTF-8 character that does not end there (0–3). */
function cutShort(bytes: Buffer): number {
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const byte = bytes[bytes.length - back]!;
    if ((byte & 0xc0) === 0x80) continue; // a continuation byte: look further back for the lead
    const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return length > back ? back : 0;
  }
  return 0;
}

/**
 * The file as a stream of UTF-8 bytes: a UTF-8 file as it is (its BOM, if any, is the parser's to drop), any other
 * encoding decoded as it streams. A byte a UTF-16 file cannot have becomes U+FFFD, found and refused by the reader.
 */
export function utf8Stream(file: string, encoding: TextEncodingName): Readable {
  const source = createReadStream(file);
  if (encoding === "utf-8") return source;
  // One byte a character: each chunk stands alone. UTF-16's pairs may be cut by a chunk: the decoder streams.
  const decoder = encoding === "windows-1252" ? null : new TextDecoder(encoding);
  const text = (chunk: Buffer) => (decoder ? decoder.decode(chunk, { stream: true }) : windows1252FromLatin1(chunk.toString("latin1")));
  const decode = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      done(null, Buffer.from(text(chunk), "utf8"));
    },
    flush(done) {
      done(null, Buffer.from(decoder?.decode() ?? "", "utf8"));
    },
  });
  source.on("error", (err) => decode.destroy(err));
  decode.on("close", () => source.destroy());
  return source.pipe(decode);
}
