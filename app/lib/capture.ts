/** What a photo's EXIF said of how it was taken (services/capture.server.ts reads it), and how it is shown. */

export interface CaptureData {
  /** The capture time's wall clock in seconds as if UTC (EXIF has no zone); 0: unknown. */
  takenAt: number;
  cameraMake: string;
  cameraModel: string;
  /** Degrees, 6 decimals (about 10 cm); null: none given. Kept only where the project allows (models/images.server.ts). */
  gps: { lat: number; lon: number } | null;
}

export const NO_CAPTURE: CaptureData = { takenAt: 0, cameraMake: "", cameraModel: "", gps: null };

/** The variant of an original's key whose bytes are the file less the position its camera wrote (`<checksum>-nogps.jpg`). */
export const NO_POSITION_VARIANT = "nogps";

/** The camera as people name it: the model alone when it already names the maker ("Canon EOS R6"), else both. */
export function cameraName(make: string, model: string): string {
  if (!model) return make;
  return make && !model.toLowerCase().startsWith(make.split(" ")[0]!.toLowerCase()) ? `${make} ${model}` : model;
}

/** A capture time (wall-clock seconds as if UTC, 0: unknown) as ISO 8601 without a zone, "2024-05-17T14:03:09"; null when unknown. */
export const takenIso = (takenAt: number) => (takenAt > 0 ? new Date(takenAt * 1000).toISOString().slice(0, 19) : null);

/** A capture time as people read it, "17 May 2024, 14:03" (the camera's own clock: no zone is converted). */
export function takenText(takenAt: number): string {
  const d = new Date(takenAt * 1000);
  const months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
  const two = (n: number) => String(n).padStart(2, "0");
  return `${d.getUTCDate()} ${months[d.getUTCMonth()]} ${d.getUTCFullYear()}, ${two(d.getUTCHours())}:${two(d.getUTCMinutes())}`;
}

/** A "YYYY-MM-DD" day as the capture time of its first second (`end`: of the next day's), null when it is not a day. */
export function dayStart(day: string, end = false): number | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  if (!m) return null;
  const [y, mo, d] = m.slice(1).map(Number) as [number, number, number];
  const ms = Date.UTC(y, mo - 1, d + (end ? 1 : 0));
  const check = new Date(Date.UTC(y, mo - 1, d));
  if (y < 1970 || check.getUTCMonth() !== mo - 1 || check.getUTCDate() !== d) return null;
  return ms / 1000;
}
