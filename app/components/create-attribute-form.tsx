import { getFormProps, type SubmissionResult } from "@conform-to/react";
import { Form } from "@remix-run/react";
import { useMemo, useState } from "react";
import { ATTRIBUTE_MESSAGES, ATTRIBUTE_NAME_MAX, NewAttributeSchema, typedAttributeName } from "~/lib/attribute-rules";
import { Field, FormError, SubmitButton, usePending, useSchemaForm } from "./forms";

const HINT = `1 to ${ATTRIBUTE_NAME_MAX} characters, no spaces (they become underscores), none of ( ) & @ $ | % ~.`;

/**
 * An attribute name field as it is typed: the spaces between words become underscores at once (the caret stays where
 * it was); the rest is the schema's (`normalAttributeName`), the same with and without JavaScript. True when it changed.
 */
export function showTypedAttributeName(input: HTMLInputElement): boolean {
  const typed = typedAttributeName(input.value);
  if (typed === input.value) return false;
  const caret = input.selectionStart ?? input.value.length;
  // The text before the caret, with the character after it when that closes a run of spaces (then the run is one "_").
  const next = input.value.slice(caret, caret + 1).trim();
  const before = typedAttributeName(input.value.slice(0, caret) + next).length - next.length;
  input.value = typed;
  input.setSelectionRange(before, before);
  return true;
}

/**
 * Create Attribute: the shared name rules in the browser and on the server; with JavaScript a name the project
 * already has (in any case) is refused before posting, and spaces between words turn into underscores as they are typed.
 */
export function CreateAttributeForm({ names, lastResult }: { names: string[]; lastResult?: SubmissionResult<string[]> | null }) {
  const pending = usePending();
  const taken = useMemo(() => new Set(names.map((n) => n.toLowerCase())), [names]);
  const schema = useMemo(
    () => NewAttributeSchema.refine((v) => !taken.has(v.name.toLowerCase()), { message: ATTRIBUTE_MESSAGES.duplicate, path: ["name"] }),
    [taken],
  );
  const [form, fields] = useSchemaForm(schema, { id: "create-attribute", lastResult });
  const [spaced, setSpaced] = useState(false);
  return (
    <Form method="post" {...getFormProps(form)} className="create-attribute" aria-labelledby="create-attribute-heading">
      <h2 id="create-attribute-heading">Create Attribute</h2>
      <input type="hidden" name="intent" value="create" />
      <FormError id={form.errorId} errors={form.errors} />
      <Field
        label="Attribute Name"
        field={fields.name}
        hint={spaced ? ATTRIBUTE_MESSAGES.nameSpaces : HINT}
        inputProps={{
          autoComplete: "off",
          maxLength: 64,
          onInput: (e) => {
            if (showTypedAttributeName(e.currentTarget)) setSpaced(true);
          },
        }}
      />
      <SubmitButton pending={pending} pendingText="Creating…">
        Create Attribute
      </SubmitButton>
    </Form>
  );
}
