import { redirect, type ActionFunctionArgs } from "@remix-run/node";
import { page, readForm, redirectWithToast } from "~/web/http.server";
import { EXPORT_QUEUED, requestAttributeExport } from "~/services/attribute-export.server";
import { imageScopeOf } from "~/web/scopes.server";

/** Only a form posts here. */
export const loader = ({ params }: { params: { id?: string } }) => redirect(`/image/${encodeURIComponent(params.id ?? "")}`);

/** The image panel's 'export attributes by email': queued at once, the CSV follows by e-mail (any member may). */
export const action = page(async ({ request, params, context }: ActionFunctionArgs) => {
  const { scope, image } = await imageScopeOf({ request, context }, params.id);
  await readForm(request);
  await requestAttributeExport(scope, { all: false, ids: [image.id] });
  return redirectWithToast(request, `/image/${image.id}`, { kind: "success", title: EXPORT_QUEUED });
});
