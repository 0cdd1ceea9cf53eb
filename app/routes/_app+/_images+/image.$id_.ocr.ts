import { redirect, type ActionFunctionArgs } from "@remix-run/node";
import { ConflictError } from "~/lib/errors";
import { requestOcr } from "~/models/image-ocr.server";
import { page, readForm, redirectWithToast } from "~/web/http.server";
import { imageScopeOf } from "~/web/scopes.server";

/** Only a form posts here. */
export const loader = ({ params }: { params: { id?: string } }) => redirect(`/image/${encodeURIComponent(params.id ?? "")}`);

/**
 * The panel's "Read text again" (editors): the picture's text is read in the background and fills the OCR field,
 * which must be empty or the machine's; a person's text stays (the toast says why).
 */
export const action = page(async ({ request, params, context }: ActionFunctionArgs) => {
  const { scope, image } = await imageScopeOf({ request, context }, params.id);
  await readForm(request);
  try {
    await requestOcr(scope, image);
  } catch (err) {
    if (!(err instanceof ConflictError)) throw err;
    return redirectWithToast(request, `/image/${image.id}`, { kind: "error", title: err.message });
  }
  return redirectWithToast(request, `/image/${image.id}`, {
    kind: "success",
    title: "Koala is reading the text in the picture. It appears here in a moment.",
  });
});
