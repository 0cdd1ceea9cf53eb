/** The spec's upload error messages, one per step (shared by the browser uploader and the server pipeline). */
export const UPLOAD_ERRORS = {
  put: "Failed to upload image to s3",
  sign: "Image key not returned from api",
  register: "Internal server error",
} as const;

/** Files one batch may hold: the pending list of the edit views lives in the URL and keeps this many. */
export const MAX_BATCH = 300;

/** Files uploaded at once by the browser; the rest wait their turn. */
export const UPLOAD_CONCURRENCY = 3;

/** Image types the file picker offers (the server sniffs the bytes regardless). */
export const ACCEPT = "image/jpeg,image/png,image/webp,image/gif,image/tiff,image/avif,image/heic,image/heif";

/** The upload page's URL for a view; the pending list (uploaded, not yet submitted from Edit Image) lives in it. */
export const uploadUrl = (projectId: number, view: "upload" | "edit" | "multiple", pending: number[] = [], image?: number) =>
  view === "upload" || !pending.length
    ? `/upload/${projectId}`
    : `/upload/${projectId}?view=${view}&ids=${pending.join(",")}${image ? `&image=${image}` : ""}`;
