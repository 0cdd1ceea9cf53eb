import type { ActionFunctionArgs } from "@remix-run/node";
import { InvalidError } from "~/lib/errors";
import { api, readJson } from "~/web/http.server";
import { cleanFileName, keywordProblem, NewImageSchema, splitKeywords, titleFromFileName } from "~/lib/schemas";
import { projectScope } from "~/models/scope.server";
import { registerUpload } from "~/services/ingest.server";
import { requireActor } from "~/sessions.server";

/**
 * Upload step 3 (the spec's image creation call): `{ clientID, newImage: { imgURL: key, imgTags, imgOrgName,
 * imgType, imgORC, imgDesc, imgTitle } }` → `{ insertID }`. Registering the same key again answers with the same id.
 */
export const action = api(async ({ request, context }: ActionFunctionArgs) => {
  const actor = await requireActor(request, context);
  if (request.method !== "POST") return Response.json({ error: "Method not allowed" }, { status: 405, headers: { Allow: "POST" } });
  const parsed = NewImageSchema.safeParse(await readJson(request));
  if (!parsed.success) throw new InvalidError(parsed.error.issues[0]?.message);
  const { clientID, newImage } = parsed.data;
  const keywords = splitKeywords(newImage.imgTags?.[0] ?? "");
  const problem = keywordProblem(keywords);
  if (problem) throw new InvalidError(problem);
  const originalName = newImage.imgOrgName ? cleanFileName(newImage.imgOrgName) : "";
  const scope = await projectScope(actor, clientID);
  const insertID = await registerUpload(scope, newImage.imgURL, {
    title: (newImage.imgTitle ?? "").trim() || titleFromFileName(originalName),
    description: (newImage.imgDesc ?? "").trim(),
    keywords,
    ocrText: (newImage.imgORC ?? "").trim(),
    originalName,
  });
  return Response.json({ insertID }, { status: 201 });
});

export const loader = () => Response.json({ error: "Method not allowed" }, { status: 405, headers: { Allow: "POST" } });
