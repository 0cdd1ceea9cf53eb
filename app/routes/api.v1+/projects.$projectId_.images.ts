import { decodeCursor, gridPage } from "~/models/grid.server";
import { imageScope, projectScope, requireEdit, scopeVersion, withFilter } from "~/models/scope.server";
import { registerUpload } from "~/services/ingest.server";
import { withSmartTags } from "~/services/smart-search.server";
import { ApiProblem, endpoint, readBody, readQuery, reply, type Methods } from "./api.server";
import { imageBody, imageTag } from "./representations.server";
import { ImagesQuery, NewImage } from "./schemas.server";

/**
 * /api/v1/projects/{projectId}/images: a page of the project's images, newest first, keyset-paged by `after`,
 * narrowed by the grid's own filters (keyword `q`, smart `smart` or `tags`, attribute values `f`) (GET); upload
 * step 3, the file sent to a signed URL made an image with its details (POST; the same key again answers the same
 * image).
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
  POST: async ({ request, params, actor }) => {
    const scope = requireEdit(await projectScope(actor, params.projectId));
    const input = await readBody(request, NewImage);
    const id = await registerUpload(scope, input.key, {
      title: input.title ?? "",
      description: input.description ?? "",
      keywords: input.keywords ?? [],
      ocrText: input.ocrText ?? "",
      originalName: "",
    });
    const body = await imageBody((await imageScope(actor, id)).image);
    return reply(request, body, {
      status: 201,
      etag: imageTag(body),
      headers: { Location: `/api/v1/images/${id}` },
    });
  },
};

export const loader = endpoint(methods);
export const action = endpoint(methods);
