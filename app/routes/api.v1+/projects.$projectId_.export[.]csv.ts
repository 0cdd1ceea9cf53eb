import { asDownload } from "~/lib/download-slots.server";
import { recordAudit } from "~/models/audit.server";
import { idsInScope } from "~/models/grid.server";
import { projectScope, withFilter } from "~/models/scope.server";
import { csvOfSelection } from "~/services/bulk.server";
import { withSmartTags } from "~/services/smart-search.server";
import { endpoint, readBody, readQuery, type Methods } from "./api.server";
import { FilterQuery, ExportRequest } from "./schemas.server";
import { requireAll } from "./selection.server";

/**
 * POST /api/v1/projects/{projectId}/export.csv: the images' metadata and attribute values as CSV (the grid's
 * "Download images data"), streamed: the images listed, or every image of the set the query's filters give (the
 * same `q`, `smart`, `tags` and `f` as the list). Downloads at once are bounded per person, as on the pages.
 */
const methods: Methods = {
  POST: async ({ request, params, url, actor }) => {
    readQuery(url, FilterQuery);
    const scope = await withSmartTags(withFilter(await projectScope(actor, params.projectId), url.searchParams));
    const hasBody = Number(request.headers.get("Content-Length") ?? 0) > 0;
    const { imageIds } = hasBody ? await readBody(request, ExportRequest) : { imageIds: undefined };
    if (imageIds) requireAll(imageIds, await idsInScope(scope, imageIds));
    const picked = imageIds ? { all: false, ids: imageIds } : { all: true, ids: [] };
    return asDownload(request, { client: `user:${actor.id}` }, async () => {
      const csv = await csvOfSelection(scope, picked);
      await recordAudit({
        action: "bulk.download",
        actorUserId: actor.id,
        ip: actor.ip ?? null,
        subject: `project:${scope.project.id}`,
        detail: { images: csv.count, format: "csv", via: "api" },
      });
      return new Response(csv.stream, {
        headers: {
          "Content-Type": "text/csv; charset=utf-8",
          "Content-Disposition": `attachment; filename="project-${scope.project.id}-images.csv"`,
          "Cache-Control": "private, no-store",
        },
      });
    });
  },
};

export const loader = endpoint(methods);
export const action = endpoint(methods);
