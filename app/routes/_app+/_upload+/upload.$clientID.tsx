import { parseWithZod } from "@conform-to/zod";
import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Link, useActionData, useLoaderData } from "@remix-run/react";
import { z } from "zod";
import { GeneralErrorBoundary } from "~/components/error-boundary";
import { IntentButton } from "~/components/forms";
import { ImageEditForm } from "~/components/image-edit-form";
import { UploadStart } from "~/components/uploader";
import { config } from "~/config.server";
import { NotFoundError } from "~/lib/errors";
import { headerOf } from "~/web/header.server";
import { page, readForm, redirectWithToast } from "~/web/http.server";
import { thumbUrl } from "~/web/media-links.server";
import { ImageEditSchema } from "~/lib/schemas";
import { MAX_ID } from "~/lib/ids";
import { MAX_BATCH, uploadUrl } from "~/lib/uploads";
import { StaleEdit } from "~/models/image-edits.server";
import { keepBoth, lookedLike } from "~/models/duplicates.server";
import { imagesByIds } from "~/models/images.server";
import type { ProjectScope } from "~/models/scope.server";
import { uploadScope } from "~/routes/_app+/_upload+/upload-form.server";
import { removeImage, saveImageEdit } from "~/services/ingest.server";

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: `Upload · ${data?.project.name ?? "Project"} | Koala` }];

const ids = z
  .string()
  .max(6000)
  .optional()
  .transform((v) =>
    [
      ...new Set(
        (v ?? "")
          .split(",")
          .map(Number)
          .filter((n) => Number.isSafeInteger(n) && n > 0),
      ),
    ].slice(0, MAX_BATCH),
  );
const Query = z.object({
  view: z.enum(["upload", "edit", "multiple"]).catch("upload").default("upload"),
  ids: ids.catch([]),
  image: z.coerce.number().int().positive().optional().catch(undefined),
});

/** /upload/:clientID — upload, Edit Image and Multiple Uploaded Images (spec 2 §2). */
export const loader = page(async ({ request, params, context }: LoaderFunctionArgs) => {
  const scope = await uploadScope({ request, context }, params.clientID);
  const { project } = scope;
  const query = Query.parse(Object.fromEntries(new URL(request.url).searchParams));
  const pending = query.view === "upload" ? [] : await imagesByIds(scope, query.ids);
  if (query.view !== "upload" && !pending.length) throw redirect(`/upload/${project.id}`);
  const current = query.view === "edit" ? (pending.find((i) => i.id === query.image) ?? pending[0]!) : null;
  const like = current ? await lookedLike(scope, current.id) : null;
  return {
    project: { id: project.id, name: project.name, canManage: scope.can.manage },
    view: query.view,
    pending: pending.map((i) => ({ id: i.id, title: i.title, thumb: thumbUrl(i.id, i.thumb_key) })),
    current,
    lookAlike: like && { id: like.id, title: like.title, thumb: thumbUrl(like.id, like.thumbKey) },
    maxBytes: config().maxImageBytes,
    header: headerOf(scope),
  };
});

const SaveFields = z.object({ image: z.coerce.number().int().positive().max(MAX_ID), ids });

/**
 * Edit Image → Submit: saves the metadata; the image leaves the pending list. Multiple Uploaded Images → Submit without
 * editing: the images stay as uploaded, and the dashboard says how many were added. (Files arrive at
 * /upload/:clientID/files.)
 */
export const action = page(async ({ request, params, context }: ActionFunctionArgs) => {
  const scope = await uploadScope({ request, context }, params.clientID);
  const { project } = scope;
  const formData = await readForm(request);
  if (formData.get("intent") === "submit-all") {
    const submitted = await imagesByIds(scope, ids.catch([]).parse(formData.get("ids") ?? undefined));
    const count = submitted.length;
    throw await redirectWithToast(request, "/dashboard", {
      kind: "success",
      title: count === 1 ? "Image submitted" : "All images submitted",
      description: `${count} ${count === 1 ? "image" : "images"} added to ${project.name} without editing.`,
    });
  }
  const fields = SaveFields.safeParse({ image: formData.get("image"), ids: formData.get("ids") });
  if (!fields.success) throw redirect(`/upload/${project.id}`);
  const intent = formData.get("intent");
  if (intent === "keep-both" || intent === "skip") return lookAlikeAnswer(request, scope, intent, fields.data);
  const submission = parseWithZod(formData, { schema: ImageEditSchema });
  const posted = Number(formData.get("version")) || undefined;
  if (submission.status !== "success") return data({ result: submission.reply(), version: posted }, { status: 400 });
  const { image, ids: pending } = fields.data;
  const [target] = await imagesByIds(scope, [image]);
  if (!target) throw new NotFoundError("Image not found");
  const { title, description, keywords, ocr, version } = submission.value;
  try {
    await saveImageEdit(scope, target, { title, description, keywords, ocrText: ocr }, 0, version);
  } catch (err) {
    if (!(err instanceof StaleEdit)) throw err;
    return data({ result: submission.reply({ formErrors: [err.message] }), version: posted }, { status: 409 });
  }
  const remaining = pending.filter((id) => id !== target.id);
  const single = pending.length <= 1;
  const next = single || !remaining.length ? uploadUrl(project.id, "upload") : uploadUrl(project.id, "multiple", remaining);
  const toast =
    single || !remaining.length
      ? { kind: "success" as const, title: single ? "Image submitted" : "All images submitted" }
      : { kind: "success" as const, title: "Image submitted" };
  throw await redirectWithToast(request, next, toast);
});

/**
 * The answer to "This looks like image #N already in the project": Keep both (the copy stays, and leaves Possible
 * duplicates), or Skip (the copy is deleted, and the next pending image is shown).
 */
async function lookAlikeAnswer(request: Request, scope: ProjectScope, intent: "keep-both" | "skip", at: { image: number; ids: number[] }) {
  const projectId = scope.project.id;
  const [target] = await imagesByIds(scope, [at.image]);
  // Only an image of this upload that still has a look-alike: a forged id, or a pair decided meanwhile (in another
  // tab, on Possible duplicates), is not skipped.
  if (!target || !at.ids.includes(target.id) || !(await lookedLike(scope, target.id))) throw new NotFoundError("Image not found");
  if (intent === "keep-both") {
    await keepBoth(scope, target.id);
    throw await redirectWithToast(request, uploadUrl(projectId, "edit", at.ids, target.id), { kind: "success", title: "Both images kept" });
  }
  await removeImage(scope, target);
  const remaining = at.ids.filter((id) => id !== target.id);
  // As after a Submit: the rest of the batch, or a new upload.
  const next = remaining.length ? uploadUrl(projectId, "multiple", remaining) : uploadUrl(projectId, "upload");
  throw await redirectWithToast(request, next, { kind: "success", title: "Upload skipped", description: "The copy was not added." });
}

export default function UploadPage() {
  const { project, view, pending, current, lookAlike, maxBytes } = useLoaderData<typeof loader>();
  const actionData = useActionData<typeof action>();
  const ids = pending.map((p) => p.id);

  if (view === "edit" && current) {
    const position = ids.indexOf(current.id) + 1;
    return (
      <section className="upload-page" aria-labelledby="upload-heading">
        <h1 id="upload-heading">Edit Image</h1>
        {ids.length > 1 ? (
          <p className="muted">
            Image {position} of {ids.length} uploaded
          </p>
        ) : null}
        {lookAlike ? (
          <section className="duplicate-notice" aria-labelledby="duplicate-notice-title">
            <img src={lookAlike.thumb} alt="" width={120} height={90} />
            <div>
              <h2 id="duplicate-notice-title">This looks like image #{lookAlike.id} already in the project</h2>
              <p className="muted">{lookAlike.title || "Untitled"}</p>
              <div className="form-actions">
                <Link to={`/image/${lookAlike.id}`} className="btn" target="_blank" rel="noreferrer">
                  View image #{lookAlike.id}
                  <span className="sr-only"> (opens in a new tab)</span>
                </Link>
                <IntentButton intent="keep-both" fields={{ image: String(current.id), ids: ids.join(",") }}>
                  Keep both
                </IntentButton>
                <IntentButton intent="skip" fields={{ image: String(current.id), ids: ids.join(",") }} className="btn btn-danger">
                  Skip this upload
                </IntentButton>
              </div>
            </div>
          </section>
        ) : null}
        <ImageEditForm
          key={current.id}
          image={current}
          lastResult={actionData?.result}
          canRotate={false}
          cancelTo={ids.length > 1 ? uploadUrl(project.id, "multiple", ids) : `/upload/${project.id}`}
          submitLabel="Submit"
          hidden={{ image: String(current.id), ids: ids.join(",") }}
          postedVersion={actionData?.version}
        />
      </section>
    );
  }

  if (view === "multiple") {
    return (
      <section className="upload-page" aria-labelledby="upload-heading">
        <h1 id="upload-heading">Multiple Uploaded Images</h1>
        <p className="muted">{pending.length} images wait for their details. Edit each one, or submit them as they are.</p>
        <ul className="uploaded-list">
          {pending.map((p) => (
            <li key={p.id}>
              <img src={p.thumb} alt="" width={120} height={90} />
              <span className="uploaded-title">{p.title || "Untitled"}</span>
              <Link to={uploadUrl(project.id, "edit", ids, p.id)} className="btn" aria-label={`Edit ${p.title || "image"}`}>
                Edit
              </Link>
            </li>
          ))}
        </ul>
        <IntentButton intent="submit-all" fields={{ ids: ids.join(",") }} className="btn btn-primary">
          Submit without editing
        </IntentButton>
      </section>
    );
  }

  return <UploadStart project={project} maxBytes={maxBytes} />;
}

export const ErrorBoundary = GeneralErrorBoundary;
