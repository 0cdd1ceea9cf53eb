import { parseWithZod } from "@conform-to/zod";
import { data, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { useActionData, useLoaderData } from "@remix-run/react";
import { GeneralErrorBoundary } from "~/components/error-boundary";
import { TypedConfirmForm } from "~/components/typed-confirm";
import { ATTRIBUTE_MESSAGES } from "~/lib/attribute-rules";
import { getErrorMessage, HttpError, NotFoundError } from "~/lib/errors";
import { page, readForm, redirectWithToast } from "~/web/http.server";
import { log } from "~/lib/log.server";
import { REMOVE_WORD, typedConfirmation } from "~/lib/schemas";
import { removeAttributeValue } from "~/models/attributes.server";
import { imageAttributes } from "~/models/images.server";
import { parseId } from "~/models/scope.server";
import { imageScopeOf, type ScopeRequest } from "~/web/scopes.server";

export const meta: MetaFunction = () => [{ title: "Remove attribute | Koala" }];

const Schema = typedConfirmation(REMOVE_WORD, ATTRIBUTE_MESSAGES.removeConfirm);

/** The image's value of a user attribute, for an editor of its project (a viewer: 403); any other image or value: 404. */
async function target(req: ScopeRequest, params: { id?: string; attributeId?: string }) {
  const { scope, image } = await imageScopeOf(req, params.id, { need: "write" });
  const attributeId = parseId(params.attributeId);
  const value = (await imageAttributes(image.id)).find((v) => v.attributeId === attributeId && v.type === 3);
  if (!value) throw new NotFoundError("Attribute not found");
  return { scope, image, value };
}

export const loader = page(async ({ request, params, context }: LoaderFunctionArgs) => {
  const { image, value } = await target({ request, context }, params);
  return { image: { id: image.id, title: image.title }, value };
});

/** The typed REMOVE takes the value off the image: 'Attribute Removed', or 'Attribute could not be removed.'. */
export const action = page(async ({ request, params, context }: ActionFunctionArgs) => {
  const { scope, image, value } = await target({ request, context }, params);
  const submission = parseWithZod(await readForm(request), { schema: Schema });
  if (submission.status !== "success") return data({ result: submission.reply() }, { status: 400 });
  let removed = false;
  try {
    removed = await removeAttributeValue(scope, image.id, value.attributeId);
  } catch (err) {
    if (err instanceof HttpError) throw err;
    log.error("attribute remove failed", { imageId: image.id, error: getErrorMessage(err) });
  }
  throw await redirectWithToast(
    request,
    `/image/${image.id}`,
    removed ? { kind: "success", title: ATTRIBUTE_MESSAGES.removed } : { kind: "error", title: ATTRIBUTE_MESSAGES.removeFailed },
  );
});

export default function RemoveAttribute() {
  const { image, value } = useLoaderData<typeof loader>();
  const answer = useActionData<typeof action>();
  return (
    <section className="confirm-page" aria-labelledby="remove-attribute-heading">
      <h1 id="remove-attribute-heading">Remove attribute “{value.name}”</h1>
      <TypedConfirmForm
        id="remove-attribute"
        word={REMOVE_WORD}
        message={ATTRIBUTE_MESSAGES.removeConfirm}
        submitLabel="Remove attribute"
        pendingText="Removing…"
        cancelTo={`/image/${image.id}`}
        lastResult={answer?.result}
      >
        <p>
          “{image.title || "Untitled"}” loses its value “{value.value}” of {value.name}.
        </p>
      </TypedConfirmForm>
    </section>
  );
}

export const ErrorBoundary = GeneralErrorBoundary;
