import { getFormProps } from "@conform-to/react";
import { parseWithZod } from "@conform-to/zod";
import { data, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData } from "@remix-run/react";
import { GeneralErrorBoundary } from "~/components/error-boundary";
import { Field, FormError, SubmitButton, usePending, useSchemaForm } from "~/components/forms";
import { ConflictError, getErrorMessage } from "~/lib/errors";
import { headerOf } from "~/lib/header.server";
import { page, readForm, redirectWithToast } from "~/lib/http.server";
import { log } from "~/lib/log.server";
import { BOARD_MESSAGES, BoardNameSchema } from "~/lib/schemas";
import { createBoard } from "~/models/boards.server";
import { projectScope, requireEdit } from "~/models/scope.server";
import { requireActor } from "~/sessions.server";

export const meta: MetaFunction = () => [{ title: "Create board | Koala" }];

async function scopeOf(request: Request, id: string | undefined) {
  return requireEdit(await projectScope(await requireActor(request), id));
}

/** Create a board in a project (the header's create-board icon). A page with a plain form: no JavaScript needed. */
export const loader = page(async ({ request, params }: LoaderFunctionArgs) => {
  const scope = await scopeOf(request, params.id);
  return { project: { id: scope.project.id, name: scope.project.name }, header: headerOf(scope) };
});

export const action = page(async ({ request, params }: ActionFunctionArgs) => {
  const scope = await scopeOf(request, params.id);
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
  const pending = usePending();
  const [form, fields] = useSchemaForm(BoardNameSchema, { id: "new-board", lastResult: answer?.result });
  return (
    <section className="confirm-page" aria-labelledby="new-board-heading">
      <h1 id="new-board-heading">Create a board in {project.name}</h1>
      <Form method="post" {...getFormProps(form)}>
        <FormError id={form.errorId} errors={form.errors} />
        <Field
          label="Board name"
          field={fields.title}
          hint="3 to 64 characters, without ( ) & @ $ | % ~."
          inputProps={{ maxLength: 64, autoFocus: true, autoComplete: "off" }}
        />
        <div className="form-actions">
          <SubmitButton pending={pending} pendingText="Creating…">
            Create board
          </SubmitButton>
          <Link to={`/client/${project.id}`} className="btn">
            Cancel
          </Link>
        </div>
      </Form>
    </section>
  );
}

export const ErrorBoundary = GeneralErrorBoundary;
