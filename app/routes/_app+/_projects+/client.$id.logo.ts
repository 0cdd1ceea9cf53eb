import type { LoaderFunctionArgs } from "@remix-run/node";
import { Readable } from "node:stream";
import { NotFoundError } from "~/lib/errors";
import { api } from "~/web/http.server";
import { projectLogoKey } from "~/models/projects.server";
import { parseId } from "~/models/scope.server";
import { storage } from "~/services/storage.server";
import { requireActor } from "~/sessions.server";

/** A project's logo, for its members (the header's circle, the cards). Its address changes with it: cached for good. */
export const loader = api(async ({ request, params, context }: LoaderFunctionArgs) => {
  const id = parseId(params.id);
  const key = id === null ? null : await projectLogoKey(await requireActor(request, context), id);
  const found = key ? await storage().get(key) : null;
  if (!found) throw new NotFoundError("Not found");
  return new Response(Readable.toWeb(found.stream) as ReadableStream, {
    headers: {
      "Content-Type": "image/webp",
      "Content-Length": String(found.size),
      "Cache-Control": "private, max-age=31536000, immutable",
    },
  });
});
