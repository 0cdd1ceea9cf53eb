import { parseWithZod } from "@conform-to/zod";
import { data, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Link, useActionData, useLoaderData } from "@remix-run/react";
import { GeneralErrorBoundary } from "~/components/error-boundary";
import { BoardNameForm } from "~/components/name-form";
import { ConflictError, getErrorMessage } from "~/lib/errors";
import { headerOf } from "~/web/header.server";
import { page, readForm, redirectWithToast } from "~/web/http.server";
import { log } from "~/lib/log.server";
import { BOARD_MESSAGES, BoardNameSchema } from "~/lib/schemas";
import { renameBoard } from "~/models/boards.server";
import { boardScopeOf } from "~/web/scopes.server";

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: `Edit ${data?.board.title ?? "board"} | Koala` }];

/** The board edit dialog: rename, and the way to Delete (behind a typed DELETE on its own page). */
export const loader = page(async ({ request, params, context }: LoaderFunctionArgs) => {
  const scope = await boardScopeOf({ request, context }, params, { need: "write" });
  return { board: { id: scope.board.id, title: scope.board.title, projectId: scope.project.id }, header: headerOf(scope) };
});

export const action = page(async ({ request, params, context }: ActionFunctionArgs) => {
  const scope = await boardScopeOf({ request, context }, params, { need: "write" });
  const submission = parseWithZod(await readForm(request), { schema: BoardNameSchema });
  if (submission.status !== "success") return data({ result: submission.reply() }, { status: 400 });
  try {
    await renameBoard(scope, submission.value.title);
  } catch (err) {
    if (err instanceof ConflictError)
      return data({ result: submission.reply({ fieldErrors: { title: [BOARD_MESSAGES.existsLong] } }) }, { status: 409 });
    log.error("board rename failed", { error: getErrorMessage(err) });
    return data({ result: submission.reply({ formErrors: [BOARD_MESSAGES.renameFailed] }) }, { status: 500 });
  }
  return redirectWithToast(request, `/${scope.project.id}/board/${scope.board.id}`, { kind: "success", title: "Board renamed" });
});

export default function EditBoard() {
  const { board } = useLoaderData<typeof loader>();
  const answer = useActionData<typeof action>();
  const back = `/${board.projectId}/board/${board.id}`;
  return (
    <section className="confirm-page" aria-labelledby="edit-board-heading">
      <h1 id="edit-board-heading">Edit board</h1>
      <BoardNameForm
        id="edit-board"
        label="Board name"
        defaultValue={board.title}
        lastResult={answer?.result}
        submit="Save"
        pendingText="Saving…"
        cancelTo={back}
      />
      <h2>Delete this board</h2>
      <p>The images stay in the project; only the board and its pins go.</p>
      <Link to={`${back}/delete`} className="btn btn-danger">
        Delete board
      </Link>
    </section>
  );
}

export const ErrorBoundary = GeneralErrorBoundary;
