import type { ActionFunctionArgs } from "@remix-run/node";
import { InvalidError } from "~/lib/errors";
import { api, readJson } from "~/web/http.server";
import { cleanFileName, SignUploadSchema } from "~/lib/schemas";
import { projectScope } from "~/models/scope.server";
import { signUpload } from "~/services/ingest.server";
import { requireActor } from "~/sessions.server";

/** Upload step 1 (the spec's signed-URL call): `{ clientID, fileName }` → `{ uploadUrl, key }`. */
export const action = api(async ({ request, context }: ActionFunctionArgs) => {
  const actor = await requireActor(request, context);
  if (request.method !== "POST") return Response.json({ error: "Method not allowed" }, { status: 405, headers: { Allow: "POST" } });
  const parsed = SignUploadSchema.safeParse(await readJson(request));
  if (!parsed.success) throw new InvalidError(parsed.error.issues[0]?.message);
  const { clientID, fileName, fileSize } = parsed.data;
  const scope = await projectScope(actor, clientID);
  return Response.json(await signUpload(scope, cleanFileName(fileName), fileSize), { headers: { "Cache-Control": "no-store" } });
});

export const loader = () => Response.json({ error: "Method not allowed" }, { status: 405, headers: { Allow: "POST" } });
