import { createRequire } from "node:module";
import { crc32 } from "node:zlib";

/**
 * yazl checksums every byte of a ZIP through buffer-crc32, a table-driven JavaScript CRC-32 (a few hundred MB/s,
 * half the CPU of a download of stored entries). Node's zlib.crc32 gives the same values natively, many times
 * faster. This points the `unsigned` function of yazl's own copy of buffer-crc32 (the CommonJS instance yazl
 * requires, not an ES module copy of it) at zlib.crc32 for the calls yazl makes — a Buffer and an optional previous
 * value — and leaves any other call to the original. Call it before writing a ZIP; calling it again does nothing.
 */
type Unsigned = (input: unknown, previous?: unknown) => number;
let done = false;

export function nativeZipCrc(): void {
  if (done) return;
  done = true;
  const fromYazl = createRequire(createRequire(import.meta.url).resolve("yazl"));
  const bufferCrc32 = fromYazl("buffer-crc32") as { unsigned: Unsigned };
  const original = bufferCrc32.unsigned;
  bufferCrc32.unsigned = (input, previous) =>
    Buffer.isBuffer(input) && (previous === undefined || typeof previous === "number")
      ? crc32(input, previous ?? 0)
      : original(input, previous);
}
