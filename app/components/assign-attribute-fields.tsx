import { getInputProps, getSelectProps, type FieldMetadata } from "@conform-to/react";
import { ATTRIBUTE_VALUE_MAX, VALUE_HINT } from "~/lib/attribute-rules";
import { FieldShell } from "./forms";

type AnyField = FieldMetadata<any, any, string[]>;

/**
 * Attribute, Value and Replace: the fields of assigning a value, in the image panel's page and in bulk Assign
 * Attributes, over the shared AssignAttributeSchema (the value rule is stated under the field).
 */
export function AssignAttributeFields({
  choices,
  fields,
}: {
  choices: { id: number; name: string }[];
  fields: { attribute: AnyField; value: AnyField; replace: AnyField };
}) {
  const described = (field: AnyField, hint?: string) =>
    [field.errors?.length ? field.errorId : null, hint].filter(Boolean).join(" ") || undefined;
  return (
    <>
      <FieldShell label="Attribute Name" field={fields.attribute}>
        <select {...getSelectProps(fields.attribute)} aria-describedby={described(fields.attribute)}>
          <option value="">Select an attribute</option>
          {choices.map((c) => (
            <option key={c.id} value={c.id}>
              {c.name}
            </option>
          ))}
        </select>
      </FieldShell>
      <FieldShell label="Value" field={fields.value} hint={VALUE_HINT}>
        <input
          {...getInputProps(fields.value, { type: "text" })}
          maxLength={ATTRIBUTE_VALUE_MAX + 16}
          autoComplete="off"
          aria-describedby={described(fields.value, `${fields.value.id}-hint`)}
        />
      </FieldShell>
      <div className="field field-check">
        <input {...getInputProps(fields.replace, { type: "checkbox", value: "yes" })} />
        <label htmlFor={fields.replace.id}>Replace values already there</label>
      </div>
    </>
  );
}
