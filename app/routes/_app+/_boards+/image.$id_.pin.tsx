import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Form, Link, useLoaderData } from "@remix-run/react";
import { z } from "zod";
import { GeneralErrorBoundary } from "~/components/error-boundary";
import { CancelLink, SubmitButton, usePending } from "~/components/forms";
import { getErrorMessage, HttpError } from "~/lib/errors";
import { headerOf } from "~/web/header.server";
import { page, readForm, redirectWithToast } from "~/web/http.server";
import { log } from "~/lib/log.server";
import { thumbUrl } from "~/web/media-links.server";
import { safeRedirect } from "~/lib/redirect";
import { boardsOfProject, pinImage } from "~/models/boards.server";
import { imageScopeOf } from "~/web/scopes.server";

export const meta: MetaFunction = () => [{ title: "Pin to a board | Koala" }];

/**
 * Pin to a board (the card menu): the project's boards, client-level boards left out (spec), each a button.
 * 'No Boards' when there is none to pin to.
 */
export const loader = page(async ({ request, params, context }: LoaderFunctionArgs) => {
  const { scope, image } = await imageScopeOf({ request, context }, params.id, { need: "write" });
  const back = safeRedirect(new URL(request.url).searchParams.get("from"), `/client/${scope.project.id}`);
  return {
    image: { id: image.id, title: image.title, thumb: thumbUrl(image.id, image.thumb_key) },
    boards: await boardsOfProject(scope, { pinnable: true }),
    back,
    projectId: scope.project.id,
    header: headerOf(scope),
  };
});

const PinForm = z.object({ board: z.string().min(1).max(64), back: z.string().max(2000).optional() });

export const action = page(async ({ request, params, context }: ActionFunctionArgs) => {
  const { scope, image } = await imageScopeOf({ request, context }, params.id, { need: "write" });
  const parsed = PinForm.safeParse(Object.fromEntries(await readForm(request)));
  const back = safeRedirect(parsed.success ? parsed.data.back : null, `/client/${scope.project.id}`);
  if (!parsed.success)
    return redirectWithToast(request, back, { kind: "error", title: "Failed to pin image", description: "Choose a board." });
  try {
    const result = await pinImage(scope, image.id, parsed.data.board);
    return redirectWithToast(
      request,
      back,
      result.status === "success"
        ? { kind: "success", title: "Image pinned", description: `Pinned to “${result.board}”.` }
        : { kind: "info", title: "Image already pinned", description: `Image is already pinned to ${result.board}` },
    );
  } catch (err) {
    if (!(err instanceof HttpError) || err.status >= 500) log.error("pin failed", { error: getErrorMessage(err) });
    return redirectWithToast(request, back, {
      kind: "error",
      title: "Failed to pin image",
      description: err instanceof HttpError ? err.message : undefined,
    });
  }
});

export default function PinImage() {
  const { image, boards, back, projectId } = useLoaderData<typeof loader>();
  const pending = usePending();
  return (
    <section className="confirm-page" aria-labelledby="pin-heading">
      <h1 id="pin-heading">Pin to a board</h1>
      <figure className="confirm-figure">
        <img src={image.thumb} alt="" width={240} height={180} />
        <figcaption>{image.title || "Untitled"}</figcaption>
      </figure>
      {boards.length === 0 ? (
        <div role="status">
          <p className="empty">No Boards</p>
          <p>This project has no board to pin to yet.</p>
          <p>
            <Link to={`/client/${projectId}/boards/new`} className="btn btn-primary">
              Create a board
            </Link>
          </p>
        </div>
      ) : (
        <Form method="post" className="pin-boards">
          <input type="hidden" name="back" value={back} />
          <ul>
            {boards.map((b) => (
              <li key={b.id}>
                <SubmitButton name="board" value={b.id} className="btn" pending={pending} pendingText={`Pin to ${b.title}`}>
                  Pin to {b.title}
                </SubmitButton>
              </li>
            ))}
          </ul>
        </Form>
      )}
      <p>
        <CancelLink to={back} />
      </p>
    </section>
  );
}

export const ErrorBoundary = GeneralErrorBoundary;
