import { parseWithZod } from "@conform-to/zod";
import { data, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { useActionData, useLoaderData } from "@remix-run/react";
import { GeneralErrorBoundary } from "~/components/error-boundary";
import { TypedConfirmForm } from "~/components/typed-confirm";
import { ATTRIBUTE_MESSAGES } from "~/lib/attribute-rules";
import { attributesPath } from "~/routes/_app+/_attributes+/attributes-page.server";
import { getErrorMessage, HttpError, NotFoundError } from "~/lib/errors";
import { page, readForm, redirectWithToast } from "~/web/http.server";
import { log } from "~/lib/log.server";
import { DELETE_WORD, typedConfirmation } from "~/lib/schemas";
import { uploadScope } from "~/routes/_app+/_upload+/upload-form.server";
import { attributesOf, deleteAttribute } from "~/models/attributes.server";
import { parseId } from "~/models/scope.server";
import type { ScopeRequest } from "~/web/scopes.server";

export const meta: MetaFunction = () => [{ title: "Delete attribute | Koala" }];

const Schema = typedConfirmation(DELETE_WORD, ATTRIBUTE_MESSAGES.deleteConfirm);

/** The attribute of the URL, for a manager of its project; anything else is not found. */
async function target(req: ScopeRequest, params: { clientID?: string; attributeId?: string }) {
  const scope = await uploadScope(req, params.clientID, { need: "manage" });
  const id = parseId(params.attributeId);
  const attribute = id ? (await attributesOf(scope)).find((a) => a.id === id) : undefined;
  if (!attribute) throw new NotFoundError("Attribute not found");
  return { scope, attribute };
}

export const loader = page(async ({ request, params, context }: LoaderFunctionArgs) => {
  const { scope, attribute } = await target({ request, context }, params);
  return { projectId: scope.project.id, attribute, deletable: attribute.type === 3 };
});

/** Deletes a user attribute and all its values (one transaction); types 1 and 2 answer 'Cannot delete this attribute'. */
export const action = page(async ({ request, params, context }: ActionFunctionArgs) => {
  const { scope, attribute } = await target({ request, context }, params);
  const submission = parseWithZod(await readForm(request), { schema: Schema });
  if (submission.status !== "success") return data({ result: submission.reply() }, { status: 400 });
  if (attribute.type !== 3) return data({ result: submission.reply({ formErrors: [ATTRIBUTE_MESSAGES.cannotDelete] }) }, { status: 400 });
  try {
    await deleteAttribute(scope, attribute.id);
  } catch (err) {
    if (err instanceof HttpError) throw err;
    log.error("attribute delete failed", { attributeId: attribute.id, error: getErrorMessage(err) });
    throw await redirectWithToast(request, attributesPath(scope), { kind: "error", title: ATTRIBUTE_MESSAGES.deleteFailed });
  }
  throw await redirectWithToast(request, attributesPath(scope), { kind: "success", title: `Attribute “${attribute.name}” deleted` });
});

export default function DeleteAttribute() {
  const { projectId, attribute, deletable } = useLoaderData<typeof loader>();
  const answer = useActionData<typeof action>();
  const back = `/upload/${projectId}/attributes`;
  return (
    <section className="confirm-page" aria-labelledby="delete-attribute-heading">
      <h1 id="delete-attribute-heading">Delete attribute “{attribute.name}”</h1>
      {deletable ? (
        <TypedConfirmForm
          id="delete-attribute"
          word={DELETE_WORD}
          message={ATTRIBUTE_MESSAGES.deleteConfirm}
          submitLabel="Delete attribute"
          pendingText="Deleting…"
          cancelTo={back}
          lastResult={answer?.result}
        >
          <p>Every value of “{attribute.name}” on the project's images goes with it. This cannot be undone.</p>
        </TypedConfirmForm>
      ) : (
        <p className="form-error" role="alert">
          {ATTRIBUTE_MESSAGES.cannotDelete}
        </p>
      )}
    </section>
  );
}

export const ErrorBoundary = GeneralErrorBoundary;
