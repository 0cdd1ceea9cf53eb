import { log } from "~/lib/log.server";
import { NotFoundError } from "~/models/actor";
import { TooManyUploads } from "~/models/uploads.server";
import { ImageRejected } from "~/services/image-files.server";

/**
 * JSON endpoints answer in JSON whatever goes wrong: 401 when signed out (instead of the pages' redirect to
 * the login), 404 for anything outside the user's projects, 422 with the reason for a refused image,
 * 500 'Internal server error' for the rest (logged, never detailed to the client).
 */
export async function jsonApi(work: () => Promise<Response>): Promise<Response> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof Response) {
      if (err.status >= 300 && err.status < 400) return Response.json({ error: "Auth failed" }, { status: 401 });
      return err;
    }
    if (err instanceof NotFoundError) return Response.json({ error: err.message }, { status: 404 });
    if (err instanceof ImageRejected) return Response.json({ error: err.message }, { status: 422 });
    if (err instanceof TooManyUploads) return Response.json({ error: err.message }, { status: 429 });
    log.error("api error", { error: err instanceof Error ? err.message : String(err) });
    return Response.json({ error: "Internal server error" }, { status: 500 });
  }
}

/** The request body as an object: JSON, or a form (with the keys as sent). */
export async function readBody(request: Request): Promise<unknown> {
  const type = request.headers.get("Content-Type") ?? "";
  if (type.includes("application/json")) return request.json().catch(() => null);
  return Object.fromEntries(await request.formData());
}

export const badRequest = (error = "Data format error") => Response.json({ error }, { status: 400 });
