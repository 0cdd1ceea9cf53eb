import { parseWithZod } from "@conform-to/zod";
import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Link, useActionData, useLoaderData } from "@remix-run/react";
import { z } from "zod";
import { ImageEditForm } from "~/components/image-edit-form";
import { ImagePanel } from "~/components/image-panel";
import { NotFoundBoundary } from "~/components/not-found";
import { orNotFound } from "~/lib/grid.server";
import { safeRedirect } from "~/lib/redirect";
import { ImageEditSchema } from "~/lib/schemas";
import { getEditableImage, StaleEdit } from "~/models/image-edits.server";
import { getImageDetail } from "~/models/images.server";
import { canEditProject } from "~/models/projects.server";
import { saveImageEdit } from "~/services/ingest.server";
import { flashToast, requireActor } from "~/sessions.server";

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: `${data?.image.title || "Image"} | Koala` }];

const Query = z.object({
  v: z.coerce.number().int().positive().optional().catch(undefined),
  from: z.string().optional(),
  edit: z.string().optional(),
});

/** The single image panel as a page (the grids open the same data in a modal with JavaScript); `?edit` for edit mode. */
export async function loader({ request, params }: LoaderFunctionArgs) {
  const actor = await requireActor(request);
  const query = Query.parse(Object.fromEntries(new URL(request.url).searchParams));
  const detail = await orNotFound(() => getImageDetail(actor, Number(params.id)));
  const canEdit = await canEditProject(actor, detail.project.id);
  const back = safeRedirect(query.from, `/client/${detail.project.id}`);
  return {
    ...detail,
    canEdit,
    editing: canEdit && query.edit !== undefined,
    shownVersion: query.v ?? detail.image.version,
    back,
    header: { title: detail.project.name, projectId: detail.project.id, projectName: detail.project.name, kind: "project" as const },
  };
}

/**
 * Edit mode's Save (a new version) and, without JavaScript, Rotate: the form comes back with the turn added
 * and the typed values kept, nothing saved yet.
 */
export async function action({ request, params }: ActionFunctionArgs) {
  const actor = await requireActor(request);
  const image = await orNotFound(() => getEditableImage(actor, Number(params.id)));
  const formData = await request.formData();
  const submission = parseWithZod(formData, { schema: ImageEditSchema });
  const version = Number(formData.get("version")) || undefined;
  if (formData.get("intent") === "rotate") {
    const turned = ((Number(formData.get("rotate")) || 0) + 90) % 360;
    const initialValue = Object.fromEntries(["title", "description", "keywords", "ocr"].map((k) => [k, String(formData.get(k) ?? "")]));
    return data({ result: { initialValue }, rotate: turned, version });
  }
  const rotate = Number(formData.get("rotate")) || 0;
  if (submission.status !== "success") return data({ result: submission.reply(), rotate, version }, { status: 400 });
  const { title, description, keywords, ocr } = submission.value;
  let saved: number | null;
  try {
    saved = await saveImageEdit(actor, image.id, { title, description, keywords, ocrText: ocr }, submission.value.rotate, version);
  } catch (err) {
    if (!(err instanceof StaleEdit)) throw err;
    return data({ result: submission.reply({ formErrors: [err.message] }), rotate, version }, { status: 409 });
  }
  const toast = saved ? { kind: "success" as const, title: "Image saved" } : { kind: "info" as const, title: "No changes made" };
  throw redirect(`/image/${image.id}`, { headers: { "Set-Cookie": await flashToast(request, toast) } });
}

export default function ImagePage() {
  const data = useLoaderData<typeof loader>();
  const actionData = useActionData<typeof action>();
  return (
    <div>
      <p>
        <Link to={data.editing ? `/image/${data.image.id}` : data.back}>← Back</Link>
      </p>
      {data.editing ? (
        <section aria-labelledby="image-title" className="image-edit">
          <h1 id="image-title">Edit image</h1>
          <ImageEditForm
            key={`${data.image.id}-${data.image.version}-${actionData?.rotate ?? 0}`}
            image={data.image}
            lastResult={actionData?.result as Parameters<typeof ImageEditForm>[0]["lastResult"]}
            rotate={actionData?.rotate ?? 0}
            postedVersion={actionData?.version}
            canRotate
            cancelTo={`/image/${data.image.id}`}
          />
        </section>
      ) : (
        <>
          <h1 className="sr-only">Image</h1>
          <ImagePanel data={data} headingId="image-title" path={`/image/${data.image.id}`} />
        </>
      )}
    </div>
  );
}

export const ErrorBoundary = NotFoundBoundary;
