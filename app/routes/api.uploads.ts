import type { ActionFunctionArgs } from "@remix-run/node";
import { badRequest, jsonApi, readBody } from "~/lib/api.server";
import { cleanFileName, SignUploadSchema } from "~/lib/schemas";
import { signUpload } from "~/services/ingest.server";
import { requireActor } from "~/sessions.server";

/** Upload step 1 (the spec's signed-URL call): `{ clientID, fileName }` → `{ uploadUrl, key }`. */
export async function action({ request }: ActionFunctionArgs) {
  return jsonApi(async () => {
    const actor = await requireActor(request);
    if (request.method !== "POST") return Response.json({ error: "Method not allowed" }, { status: 405 });
    const parsed = SignUploadSchema.safeParse(await readBody(request));
    if (!parsed.success) return badRequest(parsed.error.issues[0]?.message);
    const { clientID, fileName, fileSize } = parsed.data;
    return Response.json(await signUpload(actor, clientID, cleanFileName(fileName), fileSize), { headers: { "Cache-Control": "no-store" } });
  });
}
