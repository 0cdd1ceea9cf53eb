import { config } from "~/config.server";
import { boardScope, requireEdit } from "~/models/scope.server";
import { createShareLinks, listShareLinks } from "~/models/share-links.server";
import { flushViews } from "~/services/share-views.server";
import { endpoint, readBody, reply, type Methods } from "./api.server";
import { shareLinkBody } from "./representations.server";
import { NewShareLink } from "./schemas.server";

/**
 * /api/v1/boards/{boardId}/share-links: the board's public read-only links, with their views (GET); a new one,
 * whose URL is in this answer only (POST). As on the Share page, for those who may change the board.
 */
const methods: Methods = {
  GET: async ({ request, params, actor }) => {
    const scope = requireEdit(await boardScope(actor, params.boardId));
    await flushViews(); // the views this process counted so far
    const links = await listShareLinks(scope);
    return reply(request, { items: links.map(shareLinkBody) });
  },
  POST: async ({ request, params, actor }) => {
    const scope = requireEdit(await boardScope(actor, params.boardId));
    const input = await readBody(request, NewShareLink);
    const [made] = await createShareLinks(
      scope,
      [null],
      { expiry: input.expiry, allowDownload: input.allowDownload, showMetadata: input.showMetadata },
      input.label,
    );
    const listed = (await listShareLinks(scope)).find((l) => l.id === made!.id)!;
    return reply(request, { ...shareLinkBody(listed), url: `${config().appUrl}${made!.path}` }, { status: 201 });
  },
};

export const loader = endpoint(methods);
export const action = endpoint(methods);
