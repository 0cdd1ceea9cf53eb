import { getFormProps } from "@conform-to/react";
import { Form } from "@remix-run/react";
import type { SubmissionResult } from "@conform-to/react";
import { CancelLink, Field, FormError, SubmitButton, usePending, useSchemaForm } from "./forms";
import { BoardNameSchema } from "~/lib/schemas";

/** The naming rules of boards and projects, as the field's hint. */
export const NAME_HINT = "3 to 64 characters, without ( ) & @ $ | % ~.";

/**
 * The one-field form that names a board (create, rename): the shared schema's rules on both sides, Save with a
 * pending state, Cancel back to where the person came from. (A project's edit has more fields: ProjectForm.)
 */
export function BoardNameForm({
  id,
  label,
  defaultValue,
  lastResult,
  submit,
  pendingText,
  cancelTo,
  autoFocus = false,
}: {
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
  const [form, fields] = useSchemaForm(BoardNameSchema, {
    id,
    lastResult,
    defaultValue: defaultValue === undefined ? undefined : { title: defaultValue },
  });
  const field = fields.title;
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
