import { projectScope, requireEdit } from "~/models/scope.server";
import { receiveFormUploads } from "~/routes/_app+/_upload+/upload-form.server";
import { ApiProblem, endpoint, reply, type Methods } from "./api.server";

/**
 * POST /api/v1/projects/{projectId}/files: the direct upload for scripts, one request of `multipart/form-data`
 * whose `files` parts are images (at most 20), streamed to storage as the upload form's are. Each file is checked
 * on its own: the answer lists the image made or the reason for each. 201 when at least one was made, else 422.
 */
const methods: Methods = {
  POST: async ({ request, params, actor }) => {
    const scope = requireEdit(await projectScope(actor, params.projectId));
    if (!/^multipart\/form-data\b/i.test(request.headers.get("Content-Type") ?? ""))
      throw new ApiProblem(415, "Send the files as multipart/form-data, each in a part named files.");
    const results = await receiveFormUploads(request, scope);
    if (!results.length) throw new ApiProblem(400, "Choose at least one image to upload.");
    const items = results.map((r) => ({ name: r.name, ...(r.id ? { id: r.id } : { error: r.error ?? "Refused" }) }));
    return reply(request, { items }, { status: items.some((i) => "id" in i) ? 201 : 422 });
  },
};

export const loader = endpoint(methods);
export const action = endpoint(methods);
