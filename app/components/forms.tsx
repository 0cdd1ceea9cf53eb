import {
  getInputProps,
  getSelectProps,
  getTextareaProps,
  useForm,
  type FieldMetadata,
  type FormMetadata,
  type SubmissionResult,
} from "@conform-to/react";
import { parseWithZod } from "@conform-to/zod";
import { Form, Link, useNavigation } from "@remix-run/react";
import {
  useEffect,
  useRef,
  type ButtonHTMLAttributes,
  type FormEvent,
  type InputHTMLAttributes,
  type ReactNode,
  type TextareaHTMLAttributes,
} from "react";
import { useHydrated } from "remix-utils/use-hydrated";
import type { z, ZodTypeAny } from "zod";

/**
 * The one way to build a form: Conform over the shared zod schema (the action parses the same schema and
 * answers with `submission.reply()`), validated when a field is left and revalidated as the person types.
 * (Revalidating on blur instead can swallow a submit: the blur of pressing the button re-renders the form.)
 */
export function useSchemaForm<Schema extends ZodTypeAny>(
  schema: Schema,
  options: {
    id: string;
    lastResult?: SubmissionResult<string[]> | null;
    defaultValue?: Partial<z.input<Schema>>;
    shouldValidate?: "onBlur" | "onSubmit";
    /** After a valid submit, before it is sent (a confirm step may stop it with `event.preventDefault()`). */
    onValidSubmit?: (event: FormEvent<HTMLFormElement>, value: z.output<Schema>) => void;
  },
) {
  return useForm<z.input<Schema>, z.output<Schema>>({
    id: options.id,
    lastResult: options.lastResult,
    defaultValue: options.defaultValue as never,
    shouldValidate: options.shouldValidate ?? "onBlur",
    shouldRevalidate: "onInput",
    onValidate: ({ formData }) => parseWithZod(formData, { schema }),
    onSubmit: options.onValidSubmit
      ? (event, { submission }) => {
          if (submission?.status === "success") options.onValidSubmit!(event, submission.value);
        }
      : undefined,
  });
}

/** Whether this page's form is on its way to the server (a button's pending state; no JavaScript: never). */
export function usePending(formAction?: string) {
  const navigation = useNavigation();
  return navigation.state === "submitting" && (formAction === undefined || navigation.formAction === formAction);
}

type AnyField = FieldMetadata<any, any, string[]>;

const describedBy = (field: AnyField, hintId?: string) =>
  [field.errors?.length ? field.errorId : null, hintId].filter(Boolean).join(" ") || undefined;

/** Label, control, hint and error of one field; any control (pass it as children) fits. */
export function FieldShell({ label, field, hint, children }: { label: string; field: AnyField; hint?: ReactNode; children: ReactNode }) {
  return (
    <div className="field">
      <label htmlFor={field.id}>{label}</label>
      {children}
      {hint ? (
        <p id={`${field.id}-hint`} className="muted field-hint">
          {hint}
        </p>
      ) : null}
      <p id={field.errorId} className="field-error">
        {field.errors?.[0] ?? ""}
      </p>
    </div>
  );
}

/** A labelled input wired for screen readers: aria-invalid and aria-describedby point at the error (and the hint). */
export function Field({
  label,
  field,
  type = "text",
  hint,
  inputProps,
}: {
  label: string;
  field: AnyField;
  type?: "text" | "email" | "password" | "search" | "tel" | "url" | "number" | "date";
  hint?: ReactNode;
  inputProps?: InputHTMLAttributes<HTMLInputElement>;
}) {
  return (
    <FieldShell label={label} field={field} hint={hint}>
      <input
        {...getInputProps(field, { type })}
        {...inputProps}
        aria-describedby={describedBy(field, hint ? `${field.id}-hint` : undefined)}
      />
    </FieldShell>
  );
}

/** A labelled select of given options, wired like Field. */
export function SelectField({
  label,
  field,
  options,
  placeholder = "Select…",
}: {
  label: string;
  field: AnyField;
  options: { value: string; label: string }[];
  placeholder?: string;
}) {
  return (
    <FieldShell label={label} field={field}>
      <select {...getSelectProps(field)} aria-describedby={describedBy(field)}>
        <option value="">{placeholder}</option>
        {options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    </FieldShell>
  );
}

export function TextareaField({
  label,
  field,
  hint,
  textareaProps,
}: {
  label: string;
  field: AnyField;
  hint?: ReactNode;
  textareaProps?: TextareaHTMLAttributes<HTMLTextAreaElement>;
}) {
  return (
    <FieldShell label={label} field={field} hint={hint}>
      <textarea
        {...getTextareaProps(field)}
        {...textareaProps}
        aria-describedby={describedBy(field, hint ? `${field.id}-hint` : undefined)}
      />
    </FieldShell>
  );
}

/** The form's own error (a refusal that is about no one field), announced when it appears. */
export function FormError({ id, errors }: { id: string; errors?: string[] }) {
  return (
    <div id={id} className="form-error" role="alert">
      {errors?.length ? errors[0] : null}
    </div>
  );
}

/**
 * A long form's error summary, as GOV.UK forms have it: at the top of the form, "There is a problem" and every error
 * as a link to its field, so an error below the fold is not missed. The form's own error (the spec's '*Please fill
 * in all fields') leads to the first field left empty. Focus moves to the summary whenever a submit is refused:
 * without JavaScript the refused page comes with it `autofocus`ed; with it, after each refused submit (in the
 * browser or by the server, `lastResult`). It holds the form's error id, so it replaces FormError.
 */
export function ErrorSummary({
  form,
  fields,
  lastResult,
}: {
  form: FormMetadata<any, string[]>;
  /** The form's fields in the order they appear. */
  fields: AnyField[];
  lastResult?: SubmissionResult<string[]> | null;
}) {
  const hydrated = useHydrated();
  const ref = useRef<HTMLDivElement>(null);
  const focus = () => ref.current?.focus();
  useEffect(() => {
    // After the form's own submit handling (Conform validates, refuses and focuses the first invalid field, which is
    // then left for the summary above it).
    const onSubmit = (event: Event) => {
      if ((event.target as HTMLElement | null)?.id === form.id) setTimeout(focus);
    };
    document.addEventListener("submit", onSubmit);
    return () => document.removeEventListener("submit", onSubmit);
  }, [form.id]);
  useEffect(() => {
    if (lastResult?.status === "error") focus();
  }, [lastResult]);
  const formErrors = form.errors ?? [];
  const fieldErrors = fields.flatMap((field) => (field.errors?.length ? [{ id: field.id, message: field.errors[0]! }] : []));
  if (!formErrors.length && !fieldErrors.length) return null;
  const empty = fields.find((field) => !field.value);
  // A link to the field's id: following it moves focus into the field, with or without JavaScript.
  const item = (key: string, message: string, id?: string, errorId?: string) => (
    <li key={key} id={errorId}>
      {id ? <a href={`#${id}`}>{message}</a> : message}
    </li>
  );
  return (
    <div
      ref={ref}
      id={`${form.id}-summary`}
      className="error-summary"
      tabIndex={-1}
      aria-labelledby={`${form.id}-summary-title`}
      autoFocus={!hydrated}
    >
      <div role="alert">
        <h2 id={`${form.id}-summary-title`}>There is a problem</h2>
        <ul>
          {formErrors.map((message, i) => item(`form-${i}`, message, empty?.id, i === 0 ? form.errorId : undefined))}
          {fieldErrors.map((e) => item(e.id, e.message, e.id))}
        </ul>
      </div>
    </div>
  );
}

/** A submit button that says it is busy while its form is on its way (with JavaScript). */
export function SubmitButton({
  pending,
  pendingText,
  children,
  className = "btn btn-primary",
  ...props
}: ButtonHTMLAttributes<HTMLButtonElement> & { pending: boolean; pendingText: string }) {
  return (
    <button type="submit" className={className} {...props} disabled={pending || props.disabled}>
      {pending ? pendingText : children}
    </button>
  );
}

/** A form of one button that posts an `intent` to the page's action (the admin console's and profile's single actions). */
export function IntentButton({
  intent,
  children,
  className = "btn",
  disabled,
  fields,
}: {
  intent: string;
  children: ReactNode;
  className?: string;
  disabled?: boolean;
  fields?: Record<string, string>;
}) {
  return (
    <Form method="post">
      <input type="hidden" name="intent" value={intent} />
      {Object.entries(fields ?? {}).map(([name, value]) => (
        <input key={name} type="hidden" name={name} value={value} />
      ))}
      <button type="submit" className={className} disabled={disabled}>
        {children}
      </button>
    </Form>
  );
}

/** The Cancel of a form: back to where the person came from (a link, so it works without JavaScript). */
export function CancelLink({ to }: { to: string }) {
  return (
    <Link to={to} className="btn">
      Cancel
    </Link>
  );
}
