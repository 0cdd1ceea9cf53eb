import { config } from "~/config.server";
import { cleanFileName } from "~/lib/schemas";
import { projectScope, requireEdit } from "~/models/scope.server";
import { signUpload } from "~/services/ingest.server";
import { endpoint, readBody, reply, type Methods } from "./api.server";
import { NewUpload } from "./schemas.server";

/**
 * POST /api/v1/projects/{projectId}/uploads: upload step 1, as the browser's uploader takes it: a signed URL to
 * PUT one file to (the object store's own, or this server's /storage/upload), and the key to register it by with
 * POST /projects/{projectId}/images.
 */
const methods: Methods = {
  POST: async ({ request, params, actor }) => {
    const scope = requireEdit(await projectScope(actor, params.projectId));
    const { fileName, fileSize } = await readBody(request, NewUpload);
    const { key, uploadUrl } = await signUpload(scope, cleanFileName(fileName), fileSize);
    return reply(request, { key, uploadUrl: new URL(uploadUrl, config().appUrl).href }, { status: 201 });
  },
};

export const loader = endpoint(methods);
export const action = endpoint(methods);
