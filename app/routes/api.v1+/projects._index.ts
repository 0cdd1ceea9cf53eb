import { listProjects } from "~/models/projects.server";
import { type Methods, endpoint, reply } from "./api.server";

/** GET /api/v1/projects: the projects the token reaches, by name. */
const methods: Methods = {
  GET: async ({ request, actor }) => {
    const projects = await listProjects(actor);
    return reply(request, { items: projects.map((p) => ({ id: p.id, name: p.name })) });
  },
};

export const loader = endpoint(methods);
export const action = endpoint(methods);
