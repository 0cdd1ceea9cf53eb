import { openApiDocument } from "./openapi.server";

/** GET /api/v1/openapi.json: the API's OpenAPI 3.1 document. Public: it describes the API, it holds no data. */
export const loader = async () =>
  Response.json(openApiDocument(), { headers: { "Cache-Control": "public, max-age=300", "Access-Control-Allow-Origin": "*" } });
