import { parseWithZod } from "@conform-to/zod";
import { data, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { useActionData, useLoaderData } from "@remix-run/react";
import { GeneralErrorBoundary } from "~/components/error-boundary";
import { TypedConfirmForm } from "~/components/typed-confirm";
import { headerOf } from "~/web/header.server";
import { page, readForm, redirectWithToast } from "~/web/http.server";
import { DELETE_WORD, typedConfirmation } from "~/lib/schemas";
import { deleteBoard } from "~/models/boards.server";
import { boardScopeOf } from "~/web/scopes.server";

export const meta: MetaFunction = () => [{ title: "Delete board | Koala" }];

export const loader = page(async ({ request, params, context }: LoaderFunctionArgs) => {
  const scope = await boardScopeOf({ request, context }, params, { need: "write" });
  return {
    board: { id: scope.board.id, title: scope.board.title, projectId: scope.project.id, clientBoard: scope.board.clientBoard },
    header: headerOf(scope),
  };
});

/** Deleting a board takes the typed confirmation DELETE; the images stay in the project. */
export const action = page(async ({ request, params, context }: ActionFunctionArgs) => {
  const scope = await boardScopeOf({ request, context }, params, { need: "write" });
  const submission = parseWithZod(await readForm(request), { schema: typedConfirmation(DELETE_WORD) });
  if (submission.status !== "success") return data({ result: submission.reply() }, { status: 400 });
  await deleteBoard(scope);
  return redirectWithToast(request, `/client/${scope.project.id}`, { kind: "success", title: `Board “${scope.board.title}” deleted` });
});

export default function DeleteBoard() {
  const { board } = useLoaderData<typeof loader>();
  const answer = useActionData<typeof action>();
  return (
    <section className="confirm-page" aria-labelledby="delete-board-heading">
      <h1 id="delete-board-heading">Delete board “{board.title}”</h1>
      <p>The board and its pins go; the images stay in the project. This cannot be undone.</p>
      {board.clientBoard ? <p className="warning">This is a client-level board: the change will be visible for all users.</p> : null}
      <TypedConfirmForm
        id="delete-board"
        word={DELETE_WORD}
        submitLabel="Delete board"
        pendingText="Deleting…"
        cancelTo={`/${board.projectId}/board/${board.id}/edit`}
        lastResult={answer?.result}
      />
    </section>
  );
}

export const ErrorBoundary = GeneralErrorBoundary;
