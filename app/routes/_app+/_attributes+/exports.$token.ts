import { Readable } from "node:stream";
import type { LoaderFunctionArgs } from "@remix-run/node";
import { asDownload } from "~/lib/download-slots.server";
import { NotFoundError } from "~/lib/errors";
import { attachment } from "~/lib/file-names";
import { page } from "~/web/http.server";
import { exportFor } from "~/models/attribute-exports.server";
import { projectScope } from "~/models/scope.server";
import { storage } from "~/services/storage.server";
import { requireActor } from "~/sessions.server";

/**
 * GET /exports/:token — an attribute export's download link from its e-mail: only for the person it was made for,
 * signed in (else to the sign-in page and back) and still a member of the project, only until it expires; anything
 * else is the same 404. Streamed from storage, holding a download place (429 past the limits).
 */
export const loader = page(async ({ request, params, context }: LoaderFunctionArgs) => {
  const actor = await requireActor(request, context);
  const found = await exportFor(actor.id, params.token ?? "");
  // Removed from the project since: the file is no longer theirs to read (projectScope answers 404).
  if (found) await projectScope(actor, found.project_id);
  if (!found) throw new NotFoundError("Export not found");
  return asDownload(request, { client: `user:${actor.id}` }, async () => {
    const object = await storage().get(found.storage_key);
    if (!object) throw new NotFoundError("Export not found");
    return new Response(Readable.toWeb(object.stream) as unknown as ReadableStream<Uint8Array>, {
      headers: {
        "Content-Type": "text/csv; charset=utf-8",
        "Content-Length": String(object.size),
        "Content-Disposition": attachment(found.file_name),
        "Cache-Control": "private, no-store",
      },
    });
  });
});
