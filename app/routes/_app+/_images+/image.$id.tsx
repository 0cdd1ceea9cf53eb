import { parseWithZod } from "@conform-to/zod";
import { data, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Link, useActionData, useLoaderData } from "@remix-run/react";
import { z } from "zod";
import { ImageEditForm } from "~/components/image-edit-form";
import { GeneralErrorBoundary } from "~/components/error-boundary";
import { ImagePanel } from "~/components/image-panel";
import { headerOf } from "~/web/header.server";
import { page, readForm, redirectWithToast } from "~/web/http.server";
import { safeRedirect } from "~/lib/redirect";
import { ImageEditSchema } from "~/lib/schemas";
import { config } from "~/config.server";
import { StaleEdit } from "~/models/image-edits.server";
import { machineMayWrite } from "~/models/image-ocr.server";
import { getImageDetail } from "~/models/images.server";
import { isOnBoard } from "~/models/boards.server";
import { imageReviews } from "~/models/share-reviews.server";
import { boardScope, type ProjectScope } from "~/models/scope.server";
import { saveImageEdit } from "~/services/ingest.server";
import { imageScopeOf } from "~/web/scopes.server";

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: `${data?.image.title || "Image"} | Koala` }];

const Query = z.object({
  v: z.coerce.number().int().positive().optional().catch(undefined),
  from: z.string().optional().catch(undefined),
  /** Opened from a board: the panel also offers Remove from this board. */
  board: z.string().max(64).optional().catch(undefined),
  edit: z.string().optional().catch(undefined),
});

/** The single image panel as a page (the grids open the same data in a modal with JavaScript); `?edit` for edit mode. */
/** The board the panel was opened from, when the image is on it (else the panel is the project's). */
async function boardOf(scope: ProjectScope, boardId: string, imageId: number) {
  const board = await boardScope(scope.actor, boardId, String(scope.project.id)).catch(() => null);
  return board && (await isOnBoard(board, imageId)) ? board : null;
}

export const loader = page(async ({ request, params, context }: LoaderFunctionArgs) => {
  const { scope, image } = await imageScopeOf({ request, context }, params.id);
  const query = Query.parse(Object.fromEntries(new URL(request.url).searchParams));
  const detail = await getImageDetail(scope, image);
  const canEdit = scope.can.edit;
  const onBoard = query.board ? await boardOf(scope, query.board, image.id) : null;
  const board = onBoard && canEdit ? { path: `/${scope.project.id}/board/${onBoard.board.id}`, title: onBoard.board.title } : null;
  const back = safeRedirect(query.from, `/client/${detail.project.id}`);
  return {
    ...detail,
    canEdit,
    canReadText: canEdit && config().ocr !== null && machineMayWrite(image),
    board,
    reviews: onBoard ? await imageReviews(onBoard, image.id) : [],
    editing: canEdit && query.edit !== undefined,
    shownVersion: query.v ?? detail.image.version,
    back,
    header: headerOf(scope),
  };
});

/**
 * Edit mode's Save (a new version) and, without JavaScript, Rotate: the form comes back with the turn added
 * and the typed values kept, nothing saved yet.
 */
export const action = page(async ({ request, params, context }: ActionFunctionArgs) => {
  const { scope, image } = await imageScopeOf({ request, context }, params.id, { need: "write" });
  const formData = await readForm(request);
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
    saved = await saveImageEdit(
      scope,
      image,
      { title, description, keywords, ocrText: ocr },
      submission.value.rotate,
      submission.value.version,
    );
  } catch (err) {
    if (!(err instanceof StaleEdit)) throw err;
    return data({ result: submission.reply({ formErrors: [err.message] }), rotate, version }, { status: 409 });
  }
  const toast = saved ? { kind: "success" as const, title: "Image saved" } : { kind: "info" as const, title: "No changes made" };
  throw await redirectWithToast(request, `/image/${image.id}`, toast);
});

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

export const ErrorBoundary = GeneralErrorBoundary;
