import { getFormProps } from "@conform-to/react";
import { parseWithZod } from "@conform-to/zod";
import { data, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, useActionData, useLoaderData } from "@remix-run/react";
import { GeneralErrorBoundary } from "~/components/error-boundary";
import { AssignAttributeFields } from "~/components/assign-attribute-fields";
import { NoUserAttributes } from "~/components/no-user-attributes";
import { CancelLink, FormError, SubmitButton, usePending, useSchemaForm } from "~/components/forms";
import { ATTRIBUTE_MESSAGES, AssignAttributeSchema } from "~/lib/attribute-rules";
import { ConflictError, getErrorMessage, HttpError } from "~/lib/errors";
import { headerOf } from "~/web/header.server";
import { page, readForm, redirectWithToast } from "~/web/http.server";
import { log } from "~/lib/log.server";
import { thumbUrl } from "~/web/media-links.server";
import { assignableAttribute, assignableAttributes, assignAttribute, NotAssignable } from "~/models/attributes.server";
import { imageAttributes } from "~/models/images.server";
import { imageScopeOf } from "~/web/scopes.server";

export const meta: MetaFunction = () => [{ title: "Assign attribute | Koala" }];

export const loader = page(async ({ request, params, context }: LoaderFunctionArgs) => {
  const { scope, image } = await imageScopeOf({ request, context }, params.id, { need: "write" });
  return {
    image: { id: image.id, title: image.title, thumb: thumbUrl(image.id, image.thumb_key) },
    projectId: scope.project.id,
    choices: await assignableAttributes(scope),
    values: await imageAttributes(image.id),
    header: headerOf(scope),
  };
});

/** Assign: a value of a user attribute on the image; one already there stays unless Replace is ticked. */
export const action = page(async ({ request, params, context }: ActionFunctionArgs) => {
  const { scope, image } = await imageScopeOf({ request, context }, params.id, { need: "write" });
  const submission = parseWithZod(await readForm(request), { schema: AssignAttributeSchema });
  if (submission.status !== "success") return data({ result: submission.reply() }, { status: 400 });
  const { attribute, value, replace } = submission.value;
  try {
    await assignableAttribute(scope, attribute);
    await assignAttribute(scope, image.id, { attributeId: attribute, value, replace: replace === "yes" });
  } catch (err) {
    if (err instanceof NotAssignable)
      return data({ result: submission.reply({ fieldErrors: { attribute: [err.message] } }) }, { status: 400 });
    if (err instanceof ConflictError) return data({ result: submission.reply({ fieldErrors: { value: [err.message] } }) }, { status: 409 });
    if (err instanceof HttpError) throw err;
    log.error("attribute assign failed", { imageId: image.id, error: getErrorMessage(err) });
    throw await redirectWithToast(request, `/image/${image.id}`, { kind: "error", title: ATTRIBUTE_MESSAGES.assignFailed });
  }
  throw await redirectWithToast(request, `/image/${image.id}`, { kind: "success", title: ATTRIBUTE_MESSAGES.assigned });
});

export default function AssignAttribute() {
  const { image, projectId, choices, values } = useLoaderData<typeof loader>();
  const answer = useActionData<typeof action>();
  const pending = usePending();
  const [form, fields] = useSchemaForm(AssignAttributeSchema, { id: "assign-attribute", lastResult: answer?.result });
  const back = `/image/${image.id}`;
  return (
    <section className="confirm-page" aria-labelledby="assign-heading">
      <h1 id="assign-heading">Assign attribute</h1>
      <figure className="confirm-figure">
        <img src={image.thumb} alt="" width={240} height={180} />
        <figcaption>{image.title || "Untitled"}</figcaption>
      </figure>
      {values.length ? <p className="muted">Now: {values.map((v) => `${v.name}: ${v.value}`).join(" · ")}</p> : null}
      {choices.length ? (
        <Form method="post" {...getFormProps(form)}>
          <FormError id={form.errorId} errors={form.errors} />
          <AssignAttributeFields choices={choices} fields={fields} />
          <div className="form-actions">
            <SubmitButton pending={pending} pendingText="Assigning…">
              Assign
            </SubmitButton>
            <CancelLink to={back} />
          </div>
        </Form>
      ) : (
        <NoUserAttributes projectId={projectId} />
      )}
    </section>
  );
}

export const ErrorBoundary = GeneralErrorBoundary;
