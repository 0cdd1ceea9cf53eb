import { getFormProps } from "@conform-to/react";
import { parseWithZod } from "@conform-to/zod";
import { data, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, useActionData, useLoaderData } from "@remix-run/react";
import { CancelLink, Field, FormError, SubmitButton, usePending, useSchemaForm } from "~/components/forms";
import { GeneralErrorBoundary } from "~/components/error-boundary";
import { getErrorMessage } from "~/lib/errors";
import { page, readForm, redirectWithToast } from "~/web/http.server";
import { log } from "~/lib/log.server";
import { thumbUrl } from "~/web/media-links.server";
import { DeleteImageSchema } from "~/lib/schemas";
import { removeImage } from "~/services/ingest.server";
import { imageScopeOf } from "~/web/scopes.server";

export const meta: MetaFunction = () => [{ title: "Delete image | Koala" }];

/** Deleting an image from its project: two confirmations, the second typing DELETE. Forms, so no JavaScript is needed. */
export const loader = page(async ({ request, params, context }: LoaderFunctionArgs) => {
  const { image } = await imageScopeOf({ request, context }, params.id, { need: "write" });
  const step = new URL(request.url).searchParams.get("step") === "2" ? 2 : 1;
  return { image: { id: image.id, title: image.title, thumb: thumbUrl(image.id, image.thumb_key) }, step };
});

export const action = page(async ({ request, params, context }: ActionFunctionArgs) => {
  const { scope, image } = await imageScopeOf({ request, context }, params.id, { need: "write" });
  const submission = parseWithZod(await readForm(request), { schema: DeleteImageSchema });
  if (submission.status !== "success") return data({ result: submission.reply() }, { status: 400 });
  try {
    await removeImage(scope, image);
  } catch (err) {
    log.error("image delete failed", { imageId: image.id, error: getErrorMessage(err) });
    throw await redirectWithToast(request, `/image/${image.id}`, { kind: "error", title: "Failed to delete image" });
  }
  throw await redirectWithToast(request, `/client/${image.project_id}`, { kind: "success", title: "Image Deleted" });
});

export default function DeleteImage() {
  const { image, step } = useLoaderData<typeof loader>();
  const actionData = useActionData<typeof action>();
  const pending = usePending();
  const [form, fields] = useSchemaForm(DeleteImageSchema, {
    id: "delete-image",
    lastResult: actionData?.result,
    shouldValidate: "onSubmit",
  });
  const title = image.title || "Untitled";
  return (
    <section className="confirm-page" aria-labelledby="delete-heading">
      <h1 id="delete-heading">Delete image</h1>
      <figure className="confirm-figure">
        <img src={image.thumb} alt="" width={240} height={180} />
        <figcaption>{title}</figcaption>
      </figure>
      {step === 1 ? (
        <Form method="get" className="confirm-step">
          <p>Delete “{title}” from its project? It also leaves every board it is pinned to.</p>
          <input type="hidden" name="step" value="2" />
          <div className="form-actions">
            <button type="submit" className="btn btn-danger" autoFocus>
              Yes, delete
            </button>
            <CancelLink to={`/image/${image.id}`} />
          </div>
        </Form>
      ) : (
        <Form method="post" {...getFormProps(form)} className="confirm-step">
          <p>This cannot be undone.</p>
          <FormError id={form.errorId} errors={form.errors} />
          <Field label="Please type DELETE to confirm" field={fields.confirm} inputProps={{ autoComplete: "off", autoFocus: true }} />
          <div className="form-actions">
            <SubmitButton className="btn btn-danger" pending={pending} pendingText="Deleting…">
              Delete image
            </SubmitButton>
            <CancelLink to={`/image/${image.id}`} />
          </div>
        </Form>
      )}
    </section>
  );
}

export const ErrorBoundary = GeneralErrorBoundary;
