/** File extensions by the type the bytes really are (sniffed at upload), not by the name the file came with. */
const EXTENSIONS: Record<string, string> = {
  "image/jpeg": "jpg",
  "image/png": "png",
  "image/webp": "webp",
  "image/gif": "gif",
  "image/tiff": "tif",
  "image/avif": "avif",
  "image/heif": "heic",
};
export const extensionFor = (mimeType: string) => EXTENSIONS[mimeType] ?? "bin";

/**
 * A download's Content-Disposition: the name in plain ASCII for old clients (anything else an underscore) and in
 * full, percent-encoded, for the rest (RFC 6266; RFC 5987 allows none of ' ( ) * ! unencoded there).
 */
export const attachment = (name: string) =>
  `attachment; filename="${name.replace(/[^\w.\- ]/g, "_")}"; filename*=UTF-8''${encodeURIComponent(name).replace(
    /['()*!]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  )}`;

/** Names Windows refuses whatever their extension. */
const RESERVED = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])$/i;

/**
 * A file name made from an image's title that every OS accepts: no path separators, no control or reserved
 * characters, no reserved device names, no trailing dots or spaces, at most 100 characters before the extension,
 * and unique within `taken` (a counter, " (2)", is added). The extension comes from the real type.
 */
export function safeFileName(title: string, fallback: string, mimeType: string, taken: Set<string>): string {
  let base = title
    .normalize("NFC")
    .replace(/[\p{Cc}\p{Cf}<>:"/\\|?*]/gu, " ")
    .replace(/\s+/g, " ")
    .trim()
    .replace(/^[.\s]+|[.\s]+$/g, "");
  if (!base) base = fallback;
  if (RESERVED.test(base)) base = `${base}_`;
  base = [...base].slice(0, 100).join("").trim();
  const ext = extensionFor(mimeType);
  let name = `${base}.${ext}`;
  for (let n = 2; taken.has(name.toLowerCase()); n++) name = `${base} (${n}).${ext}`;
  taken.add(name.toLowerCase());
  return name;
}
