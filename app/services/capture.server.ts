import exifr from "exifr";
import { NO_CAPTURE, type CaptureData } from "~/lib/capture";

/**
 * What a photo's EXIF says of how it was taken: the capture time, the camera and the position. Read once, on ingest,
 * from the original's bytes (exifr reads only the metadata segments; nothing is decoded). Anything missing, malformed
 * or out of range is simply unknown: metadata never stops an image from being accepted.
 */

// exifr works out `latitude` and `longitude` (signed degrees) from the four GPS tags when they are picked.
const PICK = [
  "Make",
  "Model",
  "DateTimeOriginal",
  "CreateDate",
  "GPSLatitude",
  "GPSLongitude",
  "GPSLatitudeRef",
  "GPSLongitudeRef",
  "latitude",
  "longitude",
];
const MAX_TEXT = 100;

/** The capture data of a file's bytes (NO_CAPTURE when it has none, or none that can be read). */
export async function readCapture(buf: Buffer): Promise<CaptureData> {
  let tags: Record<string, unknown> | undefined;
  try {
    // Raw values: a date stays the camera's text (exifr would read it in the server's zone).
    tags = (await exifr.parse(buf, { pick: PICK, reviveValues: false, translateValues: false })) as Record<string, unknown> | undefined;
  } catch {
    return NO_CAPTURE;
  }
  if (!tags) return NO_CAPTURE;
  return {
    takenAt: exifTime(tags.DateTimeOriginal) || exifTime(tags.CreateDate),
    cameraMake: cleanText(tags.Make),
    cameraModel: cleanText(tags.Model),
    gps: position(tags.latitude, tags.longitude),
  };
}

/** "YYYY:MM:DD HH:MM:SS" (separators as cameras write them) as seconds; 0 for anything else or a date before 1970. */
export function exifTime(value: unknown): number {
  if (typeof value !== "string") return 0;
  const m = /^(\d{4})[:-](\d{2})[:-](\d{2})[ T](\d{2}):(\d{2}):(\d{2})/.exec(value.trim());
  if (!m) return 0;
  const [y, mo, d, h, mi, s] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  const ms = Date.UTC(y, mo - 1, d, h, mi, s);
  const back = new Date(ms);
  // 2024:02:30 or 25:00:00 would roll over into another day: not a date the camera meant.
  if (back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d || h > 23 || mi > 59 || s > 59) return 0;
  return ms > 0 ? ms / 1000 : 0;
}

/** Printable text, trimmed, at most 100 characters ("" for anything else). */
export function cleanText(value: unknown): string {
  if (typeof value !== "string") return "";
  return (
    value
      // Controls, and format characters (bidirectional overrides, zero-width ones) that would reorder what a panel shows.
      .replace(/[\p{Cc}\p{Cf}]/gu, "")
      .trim()
      .slice(0, MAX_TEXT)
      .trim()
  );
}

function position(lat: unknown, lon: unknown): CaptureData["gps"] {
  if (typeof lat !== "number" || typeof lon !== "number" || !Number.isFinite(lat) || !Number.isFinite(lon)) return null;
  if (Math.abs(lat) > 90 || Math.abs(lon) > 180 || (lat === 0 && lon === 0)) return null;
  return { lat: Math.round(lat * 1e6) / 1e6, lon: Math.round(lon * 1e6) / 1e6 };
}
