import { getFormProps, type SubmissionResult } from "@conform-to/react";
import { Form } from "@remix-run/react";
import type { ReactNode } from "react";
import { typedConfirmation } from "~/lib/schemas";
import { CancelLink, Field, FormError, SubmitButton, usePending, useSchemaForm } from "./forms";

/**
 * The one typed confirmation (DELETE, REMOVE, …): a form whose field must hold the word, checked in the browser
 * and again by the action with the same schema. A plain form: it works without JavaScript.
 */
export function TypedConfirmForm({
  id,
  word,
  message,
  submitLabel,
  pendingText,
  cancelTo,
  lastResult,
  hidden = {},
  empty,
  label,
  children,
}: {
  id: string;
  word: string;
  /** The field's label and its error (the spec's 'Please type DELETE to confirm'). */
  message?: string;
  submitLabel: string;
  pendingText: string;
  cancelTo: string;
  lastResult?: SubmissionResult<string[]> | null;
  hidden?: Record<string, string>;
  /** What an empty field is told, when it differs from `message` (the re-import's typed project name). */
  empty?: string;
  /** The field's label, when it differs from `message`. */
  label?: string;
  children?: ReactNode;
}) {
  const pending = usePending();
  const [form, fields] = useSchemaForm(typedConfirmation(word, message, empty), { id, lastResult, shouldValidate: "onSubmit" });
  return (
    <Form method="post" {...getFormProps(form)} className="confirm-step">
      {Object.entries(hidden).map(([name, value]) => (
        <input key={name} type="hidden" name={name} value={value} />
      ))}
      {children}
      <FormError id={form.errorId} errors={form.errors} />
      <Field
        label={label ?? message ?? `Please type ${word} to confirm`}
        field={fields.confirm}
        inputProps={{ autoComplete: "off", autoFocus: true }}
      />
      <div className="form-actions">
        <SubmitButton className="btn btn-danger" pending={pending} pendingText={pendingText}>
          {submitLabel}
        </SubmitButton>
        <CancelLink to={cancelTo} />
      </div>
    </Form>
  );
}
