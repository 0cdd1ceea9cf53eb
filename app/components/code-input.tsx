import { getInputProps, type FieldMetadata } from "@conform-to/react";
import type { InputHTMLAttributes } from "react";
import { MFA_CODE_PATTERN } from "~/lib/schemas";

/**
 * The MFA code, wherever one is typed (sign-in, the code after a link, TOTP set-up and removal): a numeric keypad,
 * the authenticator's autofill, and the schema's rule as the pattern. With JavaScript other characters never appear;
 * without, the server answers the spec's message and the refused code does not come back (CODE_REPLY).
 */
export function CodeInput({ field, ...props }: { field: FieldMetadata<string, any, string[]> } & InputHTMLAttributes<HTMLInputElement>) {
  return (
    <input
      {...getInputProps(field, { type: "text" })}
      {...props}
      inputMode="numeric"
      autoComplete="one-time-code"
      pattern={MFA_CODE_PATTERN}
      maxLength={12}
      onInput={(e) => {
        const el = e.currentTarget;
        const clean = el.value.replace(/[^\d ]/g, "");
        if (clean !== el.value) el.value = clean;
      }}
    />
  );
}
