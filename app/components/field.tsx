import type { ReactNode } from "react";

/** A labelled input with its error message, wired for screen readers (aria-invalid / aria-describedby come from Conform). */
export function Field({ label, htmlFor, errorId, errors, children }: { label: string; htmlFor: string; errorId: string; errors?: string[]; children: ReactNode }) {
  return (
    <div className="field">
      <label htmlFor={htmlFor}>{label}</label>
      {children}
      <p id={errorId} className="field-error">
        {errors?.[0] ?? ""}
      </p>
    </div>
  );
}

export function FormError({ id, errors }: { id: string; errors?: string[] }) {
  return (
    <div id={id} className="form-error" role="alert">
      {errors?.length ? errors[0] : null}
    </div>
  );
}
