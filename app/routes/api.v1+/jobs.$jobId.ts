import { NotFoundError } from "~/lib/errors";
import { parseId } from "~/lib/ids";
import { jobOf } from "~/models/jobs.server";
import { endpoint, reply, type Methods } from "./api.server";
import { jobBody } from "./representations.server";

/**
 * GET /api/v1/jobs/{jobId}: a background job's progress and, once done, what it did; only for the token that
 * started it (any other token, even its owner's: 404).
 */
const methods: Methods = {
  GET: async ({ request, params, actor }) => {
    const id = parseId(params.jobId);
    const job = id ? await jobOf(actor.id, id, actor.grant!.tokenId) : null;
    if (!job) throw new NotFoundError("Job not found");
    return reply(request, jobBody(job));
  },
};

export const loader = endpoint(methods);
export const action = endpoint(methods);
