import { type Methods, endpoint, problem } from "./api.server";

const missing = async ({ url }: { url: URL }) => problem(404, `No such endpoint: ${url.pathname.slice(0, 120)}`);

/** Any other address under /api/v1: a problem document, not the pages' HTML 404 (after the token is checked). */
const methods: Methods = { GET: missing, POST: missing, PATCH: missing, DELETE: missing };

export const loader = endpoint(methods);
export const action = endpoint(methods);
