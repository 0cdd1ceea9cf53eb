import { decodeCursor, gridPage } from "~/models/grid.server";
import { projectScope, scopeVersion, withFilter } from "~/models/scope.server";
import { withSmartTags } from "~/services/smart-search.server";
import { ApiProblem, type Methods, endpoint, readQuery, reply } from "./api.server";
import { ImagesQuery } from "./schemas.server";

/**
 * GET /api/v1/projects/{projectId}/images: a page of the project's images, newest first, keyset-paged by `after`,
 * narrowed by the grid's own filters (keyword `q`, smart `smart` or `tags`, attribute values `f`).
 */
const methods: Methods = {
  GET: async ({ request, params, url, actor }) => {
    const query = readQuery(url, ImagesQuery);
    const after = query.after === undefined ? null : decodeCursor(query.after);
    if (query.after !== undefined && !after)
      throw new ApiProblem(400, "Data format error", { errors: [{ pointer: "/after", detail: "Not a cursor this API gave." }] });
    const scope = await withSmartTags(withFilter(await projectScope(actor, params.projectId), url.searchParams));
    const page = await gridPage(scope, { after, limit: query.limit, fullKeywords: true });
    return reply(
      request,
      { items: page.cards.map((c) => ({ id: c.id, title: c.title, keywords: c.keywords })), next: page.next },
      { etag: `"i${scopeVersion(scope)}-${scope.role}"` },
    );
  },
};

export const loader = endpoint(methods);
export const action = endpoint(methods);
