import { parseWithZod } from "@conform-to/zod";
import { data, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { useActionData, useLoaderData } from "@remix-run/react";
import { GeneralErrorBoundary } from "~/components/error-boundary";
import { BoardNameForm } from "~/components/name-form";
import { ConflictError, getErrorMessage } from "~/lib/errors";
import { headerOf } from "~/web/header.server";
import { page, readForm, redirectWithToast } from "~/web/http.server";
import { log } from "~/lib/log.server";
import { BOARD_MESSAGES, BoardNameSchema } from "~/lib/schemas";
import { createBoard } from "~/models/boards.server";
import { projectScopeOf } from "~/web/scopes.server";

export const meta: MetaFunction = () => [{ title: "Create board | Koala" }];

/** Create a board in a project (the header's create-board icon). A page with a plain form: no JavaScript needed. */
export const loader = page(async ({ request, params, context }: LoaderFunctionArgs) => {
  const scope = await projectScopeOf({ request, context }, params.id, { need: "write" });
  return { project: { id: scope.project.id, name: scope.project.name }, header: headerOf(scope) };
});

export const action = page(async ({ request, params, context }: ActionFunctionArgs) => {
  const scope = await projectScopeOf({ request, context }, params.id, { need: "write" });
  const submission = parseWithZod(await readForm(request), { schema: BoardNameSchema });
  if (submission.status !== "success") return data({ result: submission.reply() }, { status: 400 });
  try {
    const board = await createBoard(scope, { title: submission.value.title });
    return redirectWithToast(request, `/${scope.project.id}/board/${board.id}`, {
      kind: "success",
      title: `Board “${board.title}” created`,
    });
  } catch (err) {
    if (err instanceof ConflictError)
      return data({ result: submission.reply({ fieldErrors: { title: [BOARD_MESSAGES.existsLong] } }) }, { status: 409 });
    log.error("board create failed", { error: getErrorMessage(err) });
    return data({ result: submission.reply({ formErrors: [BOARD_MESSAGES.createFailed] }) }, { status: 500 });
  }
});

export default function NewBoard() {
  const { project } = useLoaderData<typeof loader>();
  const answer = useActionData<typeof action>();
  return (
    <section className="confirm-page" aria-labelledby="new-board-heading">
      <h1 id="new-board-heading">Create a board in {project.name}</h1>
      <BoardNameForm
        id="new-board"
        label="Board name"
        lastResult={answer?.result}
        submit="Create board"
        pendingText="Creating…"
        cancelTo={`/client/${project.id}`}
        autoFocus
      />
    </section>
  );
}

export const ErrorBoundary = GeneralErrorBoundary;
