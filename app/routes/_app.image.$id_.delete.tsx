import { getFormProps, getInputProps, useForm } from "@conform-to/react";
import { parseWithZod } from "@conform-to/zod";
import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData, useNavigation } from "@remix-run/react";
import type { z } from "zod";
import { Field, FormError } from "~/components/field";
import { NotFoundBoundary } from "~/components/not-found";
import { orNotFound } from "~/lib/grid.server";
import { log } from "~/lib/log.server";
import { mediaUrl } from "~/lib/media";
import { DeleteImageSchema } from "~/lib/schemas";
import { getEditableImage } from "~/models/image-edits.server";
import { removeImage } from "~/services/ingest.server";
import { flashToast, requireActor } from "~/sessions.server";

export const meta: MetaFunction = () => [{ title: "Delete image | Koala" }];

/** Deleting an image from its project: two confirmations, the second typing DELETE. Forms, so no JavaScript is needed. */
export async function loader({ request, params }: LoaderFunctionArgs) {
  const actor = await requireActor(request);
  const image = await orNotFound(() => getEditableImage(actor, Number(params.id)));
  const step = new URL(request.url).searchParams.get("step") === "2" ? 2 : 1;
  return { image: { id: image.id, title: image.title, thumb: mediaUrl(image.id, image.thumb_key) }, step };
}

export async function action({ request, params }: ActionFunctionArgs) {
  const actor = await requireActor(request);
  const image = await orNotFound(() => getEditableImage(actor, Number(params.id)));
  const submission = parseWithZod(await request.formData(), { schema: DeleteImageSchema });
  if (submission.status !== "success") return data({ result: submission.reply() }, { status: 400 });
  try {
    await removeImage(actor, image.id);
  } catch (err) {
    log.error("image delete failed", { imageId: image.id, error: err instanceof Error ? err.message : String(err) });
    throw redirect(`/image/${image.id}`, { headers: { "Set-Cookie": await flashToast(request, { kind: "error", title: "Failed to delete image" }) } });
  }
  throw redirect(`/client/${image.project_id}`, { headers: { "Set-Cookie": await flashToast(request, { kind: "success", title: "Image Deleted" }) } });
}

export default function DeleteImage() {
  const { image, step } = useLoaderData<typeof loader>();
  const actionData = useActionData<typeof action>();
  const busy = useNavigation().state === "submitting";
  const [form, fields] = useForm<z.input<typeof DeleteImageSchema>>({
    id: "delete-image",
    lastResult: actionData?.result,
    shouldValidate: "onSubmit",
    shouldRevalidate: "onInput",
    onValidate: ({ formData }) => parseWithZod(formData, { schema: DeleteImageSchema }),
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
            <Link to={`/image/${image.id}`} className="btn">
              Cancel
            </Link>
          </div>
        </Form>
      ) : (
        <Form method="post" {...getFormProps(form)} className="confirm-step">
          <p>This cannot be undone.</p>
          <FormError id={form.errorId} errors={form.errors} />
          <Field label="Please type DELETE to confirm" htmlFor={fields.confirm.id} errorId={fields.confirm.errorId} errors={fields.confirm.errors}>
            <input {...getInputProps(fields.confirm, { type: "text" })} autoComplete="off" autoFocus />
          </Field>
          <div className="form-actions">
            <button type="submit" className="btn btn-danger" disabled={busy}>
              {busy ? "Deleting…" : "Delete image"}
            </button>
            <Link to={`/image/${image.id}`} className="btn">
              Cancel
            </Link>
          </div>
        </Form>
      )}
    </section>
  );
}

export const ErrorBoundary = NotFoundBoundary;
