/**
 * The text of a file someone made elsewhere (a CSV saved by a spreadsheet, a manifest), in whichever of the usual
 * encodings it came: UTF-8 with or without a byte-order mark, UTF-16 with one, and otherwise Windows-1252 (the
 * Latin-1 of Excel's plain "CSV" on Windows) when the bytes are not valid UTF-8. Never a silent U+FFFD: a character
 * that still cannot be read (a UTF-8 file's broken bytes behind its BOM, a replacement character already in the
 * file, a NUL of a UTF-16 file without its BOM) is found by `unreadableAt` and refused with its line.
 */
export type TextEncodingName = "utf-8" | "utf-16le" | "utf-16be" | "windows-1252";

/** The encoding a byte-order mark at the start of `head` names, and the mark's length; null without one. */
export function byteOrderMark(head: Uint8Array): { encoding: TextEncodingName; length: number } | null {
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) return { encoding: "utf-8", length: 3 };
  if (head[0] === 0xff && head[1] === 0xfe) return { encoding: "utf-16le", length: 2 };
  if (head[0] === 0xfe && head[1] === 0xff) return { encoding: "utf-16be", length: 2 };
  return null;
}

/**
 * Windows-1252's 0x80–0x9F (the rest is Latin-1, byte = code point). The five bytes it leaves undefined become U+FFFD:
 * no CSV means them, so a file of another code page is refused rather than read wrong. Our own table: Node 20's
 * TextDecoder("windows-1252") reads these bytes as Latin-1 C1 controls unless it is streaming.
 */
const C1 = "€\uFFFD‚ƒ„…†‡ˆ‰Š‹Œ\uFFFDŽ\uFFFD\uFFFD‘’“”•–—˜™š›œ\uFFFDžŸ";

/** Latin-1 text (each byte its code point, as Buffer's "latin1" gives it) read as Windows-1252. */
export const windows1252FromLatin1 = (latin1: string) => latin1.replace(/[\x80-\x9f]/g, (c) => C1[c.charCodeAt(0) - 0x80]!);

function decodeWindows1252(bytes: Uint8Array): string {
  let latin1 = "";
  for (let i = 0; i < bytes.length; i += 8192) latin1 += String.fromCharCode(...bytes.subarray(i, i + 8192));
  return windows1252FromLatin1(latin1);
}

/** A file held in memory (a manifest, a sidecar) as text, and the encoding it was read as. */
export function decodeText(bytes: Uint8Array): { text: string; encoding: TextEncodingName } {
  const bom = byteOrderMark(bytes);
  // A BOM is believed; the decoder drops it. Broken bytes behind it become U+FFFD, which unreadableAt finds.
  if (bom) return { text: new TextDecoder(bom.encoding).decode(bytes), encoding: bom.encoding };
  try {
    return { text: new TextDecoder("utf-8", { fatal: true }).decode(bytes), encoding: "utf-8" };
  } catch {
    return { text: decodeWindows1252(bytes), encoding: "windows-1252" };
  }
}

/** What cannot be stored as read: the replacement character (a byte that could not be decoded) and NUL. */
// eslint-disable-next-line no-control-regex -- NUL is what this looks for
const UNREADABLE = /[\uFFFD\u0000]/;

export const hasUnreadable = (text: string) => UNREADABLE.test(text);

/** The line (1-based) of the first character of `text` that could not be read, or null when every one could. */
export function unreadableAt(text: string): number | null {
  const at = text.search(UNREADABLE);
  if (at < 0) return null;
  let line = 1;
  for (let i = text.indexOf("\n"); i >= 0 && i < at; i = text.indexOf("\n", i + 1)) line += 1;
  return line;
}

/** The words for a file with such a character (the import's 'File Read Error' lists it with its line). */
export const UNREADABLE_MESSAGE =
  "Characters here could not be read (the file is not UTF-8, UTF-16 or Windows-1252 text): save it as CSV UTF-8 and try again";
