import { getInputProps, type FieldMetadata } from "@conform-to/react";
import { Field, FieldShell, SelectField } from "~/components/forms";
import { formatMobile, MOBILE_INPUT_LENGTH, MOBILE_PATTERN, REGISTRATION_LIMITS } from "~/lib/account-schemas";

type Option = { value: string; label: string };
/** The reference lists as a form's options (built by the loader: see choiceOptions in reference.server.ts). */
export interface ChoiceOptions {
  countries: Option[];
  dialCodes: Option[];
  timezones: Option[];
  languages: Option[];
  orgUnits: Option[];
}

type Fields = Record<"name" | "surname" | "mobile" | "country" | "timezone" | "language" | "org_unit", FieldMetadata<any, any, string[]>>;

/**
 * What registration and the profile share: name, surname, mobile (digits kept, shown 2-3-4 as typed and when a
 * refused form comes back; the server takes it with or without the spaces), country, time zone, language and org
 * unit from the reference lists.
 */
export function PersonFields({
  fields,
  options,
  dialCode,
}: {
  fields: Fields;
  options: ChoiceOptions;
  dialCode?: FieldMetadata<any, any, string[]>;
}) {
  return (
    <>
      <Field label="Name" field={fields.name} inputProps={{ maxLength: REGISTRATION_LIMITS.name, autoComplete: "given-name" }} />
      <Field label="Surname" field={fields.surname} inputProps={{ maxLength: REGISTRATION_LIMITS.surname, autoComplete: "family-name" }} />
      {dialCode ? <SelectField label="Country code" field={dialCode} options={options.dialCodes} /> : null}
      <FieldShell label="Mobile" field={fields.mobile} hint="9 digits, e.g. 82 123 4567">
        <input
          {...getInputProps(fields.mobile, { type: "tel" })}
          // As the server gives a refused form back too: digits only, grouped (the same as typing does with JavaScript).
          defaultValue={typeof fields.mobile.initialValue === "string" ? formatMobile(fields.mobile.initialValue) : undefined}
          inputMode="numeric"
          pattern={MOBILE_PATTERN}
          maxLength={MOBILE_INPUT_LENGTH}
          autoComplete="tel-national"
          aria-describedby={[fields.mobile.errors?.length ? fields.mobile.errorId : null, `${fields.mobile.id}-hint`]
            .filter(Boolean)
            .join(" ")}
          onInput={(e) => {
            const input = e.currentTarget;
            input.value = formatMobile(input.value);
          }}
        />
      </FieldShell>
      <SelectField label="Country" field={fields.country} options={options.countries} />
      <SelectField label="Timezone" field={fields.timezone} options={options.timezones} />
      <SelectField label="Language" field={fields.language} options={options.languages} />
      <SelectField label="Org unit" field={fields.org_unit} options={options.orgUnits} />
    </>
  );
}
