import { gridTotal } from "~/models/grid.server";
import { projectScope } from "~/models/scope.server";
import { type Methods, endpoint, reply } from "./api.server";

/** GET /api/v1/projects/{projectId}: the project, the token's role in it and how many images it holds. */
const methods: Methods = {
  GET: async ({ request, params, actor }) => {
    const scope = await projectScope(actor, params.projectId);
    const { project, role, can } = scope;
    const body = { id: project.id, name: project.name, role, canEdit: can.edit, canManage: can.manage, imageCount: await gridTotal(scope) };
    return reply(request, body, { etag: `"p${project.version}-${role}"` });
  },
};

export const loader = endpoint(methods);
export const action = endpoint(methods);
