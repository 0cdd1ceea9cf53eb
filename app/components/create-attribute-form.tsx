import { getFormProps, type SubmissionResult } from "@conform-to/react";
import { Form } from "@remix-run/react";
import { useMemo, useState } from "react";
import { ATTRIBUTE_MESSAGES, ATTRIBUTE_NAME_MAX, NewAttributeSchema } from "~/lib/attribute-rules";
import { Field, FormError, SubmitButton, usePending, useSchemaForm } from "./forms";

const HINT = `1 to ${ATTRIBUTE_NAME_MAX} characters, no spaces (they become underscores), none of ( ) & @ $ | % ~.`;

/**
 * Create Attribute: the shared name rules in the browser and on the server; with JavaScript a name the project
 * already has (in any case) is refused before posting, and spaces turn into underscores as they are typed.
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
            const input = e.currentTarget;
            if (!/\s/.test(input.value)) return;
            input.value = input.value.replace(/\s/g, "_");
            setSpaced(true);
          },
        }}
      />
      <SubmitButton pending={pending} pendingText="Creating…">
        Create Attribute
      </SubmitButton>
    </Form>
  );
}
