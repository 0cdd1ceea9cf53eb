import type { ActionFunctionArgs } from "@remix-run/node";
import { z } from "zod";
import { asDownload } from "~/lib/download-slots.server";
import { InvalidError, NotFoundError } from "~/lib/errors";
import { attachment } from "~/lib/file-names";
import { api, readForm } from "~/web/http.server";
import { DOWNLOAD_LIMIT_MESSAGE, MAX_DOWNLOAD } from "~/lib/schemas";
import { searchable, sharedScope, SHARED_HEADERS } from "~/routes/_shared-board+/shared-page.server";
import { recordDownload } from "~/models/share-access.server";
import { zipOfSelection } from "~/services/bulk.server";

const Wanted = z.object({
  all: z.literal("1").optional(),
  ids: z.array(z.coerce.number().int().positive()).max(MAX_DOWNLOAD).default([]),
});

/**
 * POST /shared-board/:sharedUrl/zip (?q= as the grid was searched): the board's images (when it holds at most 100) or the page's, as the boards
 * feature's streamed ZIP, only when the link allows downloads; every id is checked against the board (404 else).
 * A download place is held per visitor address and per link while it streams (429 past either limit).
 */
export const action = api(async ({ request, params, context }: ActionFunctionArgs) => {
  const scope = searchable(await sharedScope(params.sharedUrl, context), request);
  if (!scope.link.allowDownload) throw new NotFoundError("Downloads are not allowed for this link");
  const form = await readForm(request);
  const parsed = Wanted.safeParse({ all: form.get("all") ?? undefined, ids: form.getAll("ids") });
  if (!parsed.success) throw new InvalidError(DOWNLOAD_LIMIT_MESSAGE);
  const wanted = parsed.data;
  // Every posted id must be an image on this board now: zipOfSelection's count answers 404 for one that is not.
  const picked = wanted.all ? { all: true, ids: [] } : { all: false, ids: wanted.ids };
  const owner = { client: `ip:${context.clientIp ?? ""}`, link: `link:${scope.link.id}` };
  return asDownload(request, owner, async () => {
    const zip = await zipOfSelection(scope, picked, { metadata: scope.link.showMetadata });
    await recordDownload(scope);
    const name = `${
      scope.board.title
        .replace(/[^\p{L}\p{N}]+/gu, "-")
        .replace(/^-|-$/g, "")
        .slice(0, 40) || "images"
    }.zip`;
    return new Response(zip.stream, {
      headers: {
        ...SHARED_HEADERS,
        "Content-Type": "application/zip",
        "Content-Length": String(zip.size),
        "Content-Disposition": attachment(name),
      },
    });
  });
});
