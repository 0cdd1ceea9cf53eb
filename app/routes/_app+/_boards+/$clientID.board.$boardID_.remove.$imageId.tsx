import { parseWithZod } from "@conform-to/zod";
import { data, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { useActionData, useLoaderData } from "@remix-run/react";
import { GeneralErrorBoundary } from "~/components/error-boundary";
import { SharedConfirm } from "~/components/shared-confirm";
import { TypedConfirmForm } from "~/components/typed-confirm";
import { asksSharedConfirmation, SHARED_BOARD_WARNING } from "~/lib/bulk-ops";
import { getErrorMessage } from "~/lib/errors";
import { headerOf } from "~/web/header.server";
import { page, readForm, redirectWithToast } from "~/web/http.server";
import { log } from "~/lib/log.server";
import { thumbUrl } from "~/web/media-links.server";
import { REMOVE_WORD, RemoveImagesSchema } from "~/lib/schemas";
import { isOnBoard, removeFromBoard } from "~/models/boards.server";
import { imagesByIds } from "~/models/images.server";
import { parseId } from "~/models/scope.server";
import { boardScopeOf } from "~/web/scopes.server";

export const meta: MetaFunction = () => [{ title: "Remove from board | Koala" }];

/** Remove one image from a board (card menu, or the image panel opened from the board): typed REMOVE. */
export const loader = page(async ({ request, params, context }: LoaderFunctionArgs) => {
  const scope = await boardScopeOf({ request, context }, params, { need: "write" });
  const id = parseId(params.imageId) ?? -1;
  const [image] = (await isOnBoard(scope, id)) ? await imagesByIds(scope, [id]) : [];
  return {
    board: { id: scope.board.id, title: scope.board.title, clientBoard: scope.board.clientBoard },
    back: `/${scope.project.id}/board/${scope.board.id}`,
    image: image ? { id: image.id, title: image.title, thumb: thumbUrl(image.id, image.thumb_key) } : null,
    header: headerOf(scope),
  };
});

export const action = page(async ({ request, params, context }: ActionFunctionArgs) => {
  const scope = await boardScopeOf({ request, context }, params, { need: "write" });
  const back = `/${scope.project.id}/board/${scope.board.id}`;
  const schema = RemoveImagesSchema;
  const submission = parseWithZod(await readForm(request), { schema });
  if (submission.status !== "success") return data({ result: submission.reply() }, { status: 400 });
  if (asksSharedConfirmation("remove", { source: scope.board.clientBoard }) && submission.value.confirmShared !== "yes")
    return data({ result: submission.reply({ fieldErrors: { confirmShared: [SHARED_BOARD_WARNING] } }) }, { status: 400 });
  try {
    const removed = await removeFromBoard(scope, parseId(params.imageId) ?? -1);
    return redirectWithToast(
      request,
      back,
      removed ? { kind: "success", title: "Image Removed" } : { kind: "info", title: "Image already removed, please refresh" },
    );
  } catch (err) {
    log.error("remove from board failed", { error: getErrorMessage(err) });
    return redirectWithToast(request, back, { kind: "error", title: "Failed to Remove image" });
  }
});

export default function RemoveFromBoard() {
  const { board, image, back } = useLoaderData<typeof loader>();
  const answer = useActionData<typeof action>();
  const errors = (answer?.result?.error as Record<string, string[] | null> | undefined)?.confirmShared;
  return (
    <section className="confirm-page" aria-labelledby="remove-heading">
      <h1 id="remove-heading">Remove from “{board.title}”</h1>
      {image ? (
        <>
          <figure className="confirm-figure">
            <img src={image.thumb} alt="" width={240} height={180} />
            <figcaption>{image.title || "Untitled"}</figcaption>
          </figure>
          <TypedConfirmForm
            id="remove-image"
            word={REMOVE_WORD}
            submitLabel="Remove image"
            pendingText="Removing…"
            cancelTo={back}
            lastResult={answer?.result}
          >
            <p>The image leaves this board; it stays in the project.</p>
            {board.clientBoard ? <SharedConfirm errors={errors} /> : null}
          </TypedConfirmForm>
        </>
      ) : (
        <p role="status">Image already removed, please refresh</p>
      )}
    </section>
  );
}

export const ErrorBoundary = GeneralErrorBoundary;
