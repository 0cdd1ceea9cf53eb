import type { ActionFunctionArgs } from "@remix-run/node";
import { badRequest, jsonApi } from "~/lib/api.server";
import { cleanFileName, keywordProblem, NewImageSchema, splitKeywords, titleFromFileName } from "~/lib/schemas";
import { registerUpload } from "~/services/ingest.server";
import { requireActor } from "~/sessions.server";

/**
 * Upload step 3 (the spec's image creation call): `{ clientID, newImage: { imgURL: key, imgTags, imgOrgName,
 * imgType, imgORC, imgDesc, imgTitle } }` → `{ insertID }`. Registering the same key again answers with the same id.
 */
export async function action({ request }: ActionFunctionArgs) {
  return jsonApi(async () => {
    const actor = await requireActor(request);
    if (request.method !== "POST") return Response.json({ error: "Method not allowed" }, { status: 405 });
    const parsed = NewImageSchema.safeParse(await request.json().catch(() => null));
    if (!parsed.success) return badRequest(parsed.error.issues[0]?.message);
    const { clientID, newImage } = parsed.data;
    const keywords = splitKeywords(newImage.imgTags?.[0] ?? "");
    const problem = keywordProblem(keywords);
    if (problem) return badRequest(problem);
    const originalName = newImage.imgOrgName ? cleanFileName(newImage.imgOrgName) : "";
    const insertID = await registerUpload(actor, clientID, newImage.imgURL, {
      title: (newImage.imgTitle ?? "").trim() || titleFromFileName(originalName),
      description: (newImage.imgDesc ?? "").trim(),
      keywords,
      ocrText: (newImage.imgORC ?? "").trim(),
      originalName,
    });
    return Response.json({ insertID }, { status: 201 });
  });
}
