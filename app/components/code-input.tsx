import { getInputProps, type FieldMetadata } from "@conform-to/react";
import type { InputHTMLAttributes } from "react";

/** The MFA code: digits and spaces only. The pattern holds without JavaScript; with it, other characters never appear. */
export function CodeInput({ field, ...props }: { field: FieldMetadata<string, any, string[]> } & InputHTMLAttributes<HTMLInputElement>) {
  return (
    <input
      {...getInputProps(field, { type: "text" })}
      {...props}
      inputMode="numeric"
      autoComplete="one-time-code"
      pattern="[0-9 ]*"
      maxLength={12}
      onInput={(e) => {
        const el = e.currentTarget;
        const clean = el.value.replace(/[^\d ]/g, "");
        if (clean !== el.value) el.value = clean;
      }}
    />
  );
}
