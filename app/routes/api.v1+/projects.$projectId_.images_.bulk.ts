import type { z } from "zod";
import { BULK_JOB } from "~/lib/job-types";
import { idsInScope } from "~/models/grid.server";
import { projectScope, requireEdit, withFilter } from "~/models/scope.server";
import { runBulk, type BulkAction } from "~/services/bulk.server";
import { withSmartTags } from "~/services/smart-search.server";
import { endpoint, readBody, readQuery, reply, type Methods } from "./api.server";
import { jobBody } from "./representations.server";
import { BulkRequest, FilterQuery } from "./schemas.server";
import { requireAll } from "./selection.server";

/** The API's names for the grid's bulk actions. */
function bulkAction(action: z.output<typeof BulkRequest>["action"]): BulkAction {
  switch (action.op) {
    case "keywords":
      return { op: "keywords", keywords: action.keywords };
    case "attribute":
      return { op: "attributes", attributeId: action.attributeId, value: action.value, replace: action.replace };
    case "board":
      return { op: "add", target: action.boardId };
    case "delete":
      return { op: "delete" };
  }
}

/**
 * POST /api/v1/projects/{projectId}/images/bulk: the grid's bulk bar for scripts: keywords added, a value of a user
 * attribute assigned, images put on a board, or deleted; for the images listed (every id checked) or every image of
 * the set the query's filters give (`all`, but `exceptIds`). Up to 5,000 images change at once (200, what changed);
 * more by a background job in chunks (202, the job, its status at `Location`), narrowed by this token as it is when
 * the job runs.
 */
const methods: Methods = {
  POST: async ({ request, params, url, actor }) => {
    readQuery(url, FilterQuery);
    const scope = requireEdit(await withSmartTags(withFilter(await projectScope(actor, params.projectId), url.searchParams)));
    const input = await readBody(request, BulkRequest);
    if (input.imageIds) requireAll(input.imageIds, await idsInScope(scope, input.imageIds));
    const picked = input.imageIds ? { all: false, ids: input.imageIds } : { all: true, ids: input.exceptIds ?? [] };
    const run = await runBulk(scope, picked, bulkAction(input.action));
    if ("outcome" in run) return reply(request, run.outcome);
    const queued = { id: run.jobId, type: BULK_JOB, status: "queued" as const, progress: 0, total: run.count, result: null };
    return reply(request, jobBody(queued), { status: 202, headers: { Location: `/api/v1/jobs/${run.jobId}` } });
  },
};

export const loader = endpoint(methods);
export const action = endpoint(methods);
