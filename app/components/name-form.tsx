import { getFormProps } from "@conform-to/react";
import { Form } from "@remix-run/react";
import type { SubmissionResult } from "@conform-to/react";
import { CancelLink, Field, FormError, SubmitButton, usePending, useSchemaForm } from "./forms";
import { BoardNameSchema, ProjectNameSchema } from "~/lib/schemas";

/** The naming rules both schemas share, as the field's hint. */
const NAME_HINT = "3 to 64 characters, without ( ) & @ $ | % ~.";

/**
 * The one-field form that names a board or a project (create board, rename board, rename project): the shared
 * schema's rules on both sides, Save with a pending state, Cancel back to where the person came from.
 */
export function NameForm({
  kind,
  id,
  label,
  defaultValue,
  lastResult,
  submit,
  pendingText,
  cancelTo,
  autoFocus = false,
}: {
  kind: "board" | "project";
  id: string;
  label: string;
  defaultValue?: string;
  lastResult?: SubmissionResult<string[]> | null;
  submit: string;
  pendingText: string;
  cancelTo: string;
  autoFocus?: boolean;
}) {
  const pending = usePending();
  const [form, fields] = useSchemaForm(kind === "board" ? BoardNameSchema : ProjectNameSchema, {
    id,
    lastResult,
    defaultValue: defaultValue === undefined ? undefined : kind === "board" ? { title: defaultValue } : { name: defaultValue },
  });
  // The two schemas differ only in the field's name: a board's `title`, a project's `name`.
  const field = (fields as Record<string, Parameters<typeof Field>[0]["field"]>)[kind === "board" ? "title" : "name"]!;
  return (
    <Form method="post" {...getFormProps(form)}>
      <FormError id={form.errorId} errors={form.errors} />
      <Field label={label} field={field} hint={NAME_HINT} inputProps={{ maxLength: 64, autoFocus, autoComplete: "off" }} />
      <div className="form-actions">
        <SubmitButton pending={pending} pendingText={pendingText}>
          {submit}
        </SubmitButton>
        <CancelLink to={cancelTo} />
      </div>
    </Form>
  );
}
