import { parseWithZod } from "@conform-to/zod";
import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Link, useActionData, useLoaderData } from "@remix-run/react";
import { z } from "zod";
import { ImageEditForm } from "~/components/image-edit-form";
import { NotFoundBoundary } from "~/components/not-found";
import { UploadForm, UploadResults } from "~/components/uploader";
import { config } from "~/config.server";
import { orNotFound } from "~/lib/grid.server";
import { mediaUrl } from "~/lib/media";
import { ImageEditSchema } from "~/lib/schemas";
import { receiveFormUploads } from "~/lib/upload-form.server";
import { MAX_BATCH, uploadUrl } from "~/lib/uploads";
import { StaleEdit } from "~/models/image-edits.server";
import { imagesByIds } from "~/models/images.server";
import { assertCanEdit, getProject } from "~/models/projects.server";
import { saveImageEdit } from "~/services/ingest.server";
import { flashToast, requireActor } from "~/sessions.server";

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: `Upload · ${data?.project.name ?? "Project"} | Koala` }];

const ids = z
  .string()
  .max(6000)
  .optional()
  .transform((v) => [...new Set((v ?? "").split(",").map(Number).filter((n) => Number.isSafeInteger(n) && n > 0))].slice(0, MAX_BATCH));
const Query = z.object({
  view: z.enum(["upload", "edit", "multiple"]).catch("upload").default("upload"),
  ids: ids.catch([]),
  image: z.coerce.number().int().positive().optional().catch(undefined),
});

async function editableProject(request: Request, clientID: string | undefined) {
  const actor = await requireActor(request);
  const projectId = Number(clientID);
  const project = await orNotFound(async () => {
    const p = await getProject(actor, projectId);
    await assertCanEdit(actor, p.id);
    return p;
  });
  return { actor, project };
}

/** /upload/:clientID — upload, Edit Image and Multiple Uploaded Images (spec 2 §2). */
export async function loader({ request, params }: LoaderFunctionArgs) {
  const { actor, project } = await editableProject(request, params.clientID);
  const query = Query.parse(Object.fromEntries(new URL(request.url).searchParams));
  const pending = query.view === "upload" ? [] : await imagesByIds(actor, project.id, query.ids);
  if (query.view !== "upload" && !pending.length) throw redirect(`/upload/${project.id}`);
  const current = query.view === "edit" ? (pending.find((i) => i.id === query.image) ?? pending[0]!) : null;
  return {
    project: { id: project.id, name: project.name },
    view: query.view,
    pending: pending.map((i) => ({ id: i.id, title: i.title, thumb: mediaUrl(i.id, i.thumb_key) })),
    current,
    maxBytes: config().maxImageBytes,
    header: { title: project.name, projectId: project.id, projectName: project.name, kind: "project" as const },
  };
}

const SaveFields = z.object({ image: z.coerce.number().int().positive(), ids });

export async function action({ request, params }: ActionFunctionArgs) {
  const { actor, project } = await editableProject(request, params.clientID);
  if (/^multipart\/form-data/i.test(request.headers.get("Content-Type") ?? "")) {
    const results = await receiveFormUploads(request, actor, project.id);
    const done = results.flatMap((r) => (r.id ? [r.id] : []));
    if (!results.length) return data({ uploads: null, noFiles: true, result: null }, { status: 400 });
    if (done.length === results.length) throw redirect(uploadUrl(project.id, done.length === 1 ? "edit" : "multiple", done));
    return data({ uploads: results, noFiles: false, result: null }, { status: done.length ? 200 : 422 });
  }

  // Edit Image → Submit: saves the metadata; the image leaves the pending list.
  const formData = await request.formData();
  const fields = SaveFields.safeParse({ image: formData.get("image"), ids: formData.get("ids") });
  if (!fields.success) throw redirect(`/upload/${project.id}`);
  const submission = parseWithZod(formData, { schema: ImageEditSchema });
  const posted = Number(formData.get("version")) || undefined;
  if (submission.status !== "success") return data({ uploads: null, noFiles: false, result: submission.reply(), version: posted }, { status: 400 });
  const { image, ids: pending } = fields.data;
  const [target] = await imagesByIds(actor, project.id, [image]);
  if (!target) throw data({ message: "Image not found" }, { status: 404 });
  const { title, description, keywords, ocr, version } = submission.value;
  try {
    await saveImageEdit(actor, target.id, { title, description, keywords, ocrText: ocr }, 0, version);
  } catch (err) {
    if (!(err instanceof StaleEdit)) throw err;
    return data({ uploads: null, noFiles: false, result: submission.reply({ formErrors: [err.message] }), version: posted }, { status: 409 });
  }
  const remaining = pending.filter((id) => id !== target.id);
  const single = pending.length <= 1;
  const next = single || !remaining.length ? uploadUrl(project.id, "upload") : uploadUrl(project.id, "multiple", remaining);
  const toast = single || !remaining.length ? { kind: "success" as const, title: single ? "Image submitted" : "All images submitted" } : { kind: "success" as const, title: "Image submitted" };
  throw redirect(next, { headers: { "Set-Cookie": await flashToast(request, toast) } });
}

export default function UploadPage() {
  const { project, view, pending, current, maxBytes } = useLoaderData<typeof loader>();
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
        <ImageEditForm
          key={current.id}
          image={current}
          lastResult={actionData?.result}
          canRotate={false}
          cancelTo={ids.length > 1 ? uploadUrl(project.id, "multiple", ids) : `/upload/${project.id}`}
          submitLabel="Submit"
          hidden={{ image: String(current.id), ids: ids.join(",") }}
          postedVersion={actionData && "version" in actionData ? actionData.version : undefined}
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
        <Link to="/dashboard" className="btn btn-primary">
          Submit without editing
        </Link>
      </section>
    );
  }

  return (
    <section className="upload-page" aria-labelledby="upload-heading">
      <h1 id="upload-heading">Upload images to {project.name}</h1>
      <nav aria-label="Attributes" className="upload-tiles">
        <Link to={`/upload/${project.id}/attributes`} className="tile">
          Manage Attributes
        </Link>
        <Link to={`/upload/${project.id}/reimport`} className="tile">
          Re-import
        </Link>
        <Link to={`/upload/${project.id}/import-csv`} className="tile">
          Import Attributes CSV
        </Link>
      </nav>
      {actionData?.uploads ? <UploadResults projectId={project.id} results={actionData.uploads} /> : null}
      <UploadForm projectId={project.id} maxBytes={maxBytes} noFiles={Boolean(actionData?.noFiles)} />
    </section>
  );
}

export const ErrorBoundary = NotFoundBoundary;
