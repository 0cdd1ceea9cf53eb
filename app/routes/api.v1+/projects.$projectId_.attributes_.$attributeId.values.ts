import { assignAttributeBulk } from "~/models/attributes.server";
import { idsInScope } from "~/models/grid.server";
import { parseId } from "~/lib/ids";
import { NotFoundError } from "~/lib/errors";
import { projectScope, requireEdit } from "~/models/scope.server";
import { endpoint, readBody, reply, type Methods } from "./api.server";
import { requireAll } from "./selection.server";
import { AttributeAssignment } from "./schemas.server";

/**
 * POST /api/v1/projects/{projectId}/attributes/{attributeId}/values: one value of a user attribute on each image
 * given (set-based, as the grid's bulk Assign); images holding a value already keep it unless `replace`.
 */
const methods: Methods = {
  POST: async ({ request, params, actor }) => {
    const scope = requireEdit(await projectScope(actor, params.projectId));
    const attributeId = parseId(params.attributeId);
    if (!attributeId) throw new NotFoundError("Attribute not found");
    const input = await readBody(request, AttributeAssignment);
    requireAll(input.imageIds, await idsInScope(scope, input.imageIds));
    const outcome = await assignAttributeBulk(
      scope,
      { all: false, ids: input.imageIds },
      { attributeId, value: input.value, replace: input.replace },
    );
    return reply(request, outcome);
  },
};

export const loader = endpoint(methods);
export const action = endpoint(methods);
