import { parseId } from "~/lib/ids";
import { NotFoundError } from "~/lib/errors";
import { boardScope } from "~/models/scope.server";
import { revokeShareLink } from "~/models/share-links.server";
import { endpoint, noContent, type Methods } from "./api.server";

/** DELETE /api/v1/boards/{boardId}/share-links/{linkId}: revokes the link; it stops working at once. */
const methods: Methods = {
  DELETE: async ({ params, actor }) => {
    const scope = await boardScope(actor, params.boardId);
    const linkId = parseId(params.linkId);
    if (!linkId) throw new NotFoundError("Link not found");
    await revokeShareLink(scope, linkId);
    return noContent();
  },
};

export const loader = endpoint(methods);
export const action = endpoint(methods);
