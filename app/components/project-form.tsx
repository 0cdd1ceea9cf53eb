import { getFormProps, getInputProps, type SubmissionResult } from "@conform-to/react";
import { Form } from "@remix-run/react";
import { ProjectEditSchema, WSC_SOURCE_MAX } from "~/lib/schemas";
import { NAME_HINT } from "./name-form";
import { CancelLink, Field, FormError, SubmitButton, usePending, useSchemaForm } from "./forms";

/**
 * The project edit dialog (managers): the name, the WSC flag with the source a re-import reads (spec 2: a WSC
 * project's manifest of image URLs, titles, keywords and WSC attributes), and whether photos keep their GPS
 * position (a privacy choice, off by default). A plain form.
 */
export function ProjectForm({
  defaultValue,
  lastResult,
  cancelTo,
}: {
  defaultValue: { name: string; wsc: boolean; source: string; keepGps: boolean };
  lastResult?: SubmissionResult<string[]> | null;
  cancelTo: string;
}) {
  const pending = usePending();
  const [form, fields] = useSchemaForm(ProjectEditSchema, {
    id: "edit-project",
    lastResult,
    defaultValue: {
      name: defaultValue.name,
      wsc: defaultValue.wsc ? "yes" : undefined,
      source: defaultValue.source,
      keepGps: defaultValue.keepGps ? "yes" : undefined,
    },
  });
  return (
    <Form method="post" {...getFormProps(form)}>
      <FormError id={form.errorId} errors={form.errors} />
      <Field label="Project name" field={fields.name} hint={NAME_HINT} inputProps={{ maxLength: 64, autoComplete: "off" }} />
      <div className="field field-check">
        <input {...getInputProps(fields.wsc, { type: "checkbox", value: "yes" })} />
        <label htmlFor={fields.wsc.id}>WSC project (its images come from a web source)</label>
      </div>
      <Field
        label="WSC source"
        type="url"
        field={fields.source}
        hint="The address of the manifest (JSON or CSV) that lists the images; Re-import reads it."
        inputProps={{ maxLength: WSC_SOURCE_MAX, autoComplete: "off", placeholder: "https://" }}
      />
      {defaultValue.keepGps ? <input type="hidden" name={fields.keepGpsWas.name} value="yes" /> : null}
      <div className="field field-check">
        <input {...getInputProps(fields.keepGps, { type: "checkbox", value: "yes" })} aria-describedby={`${fields.keepGps.id}-hint`} />
        <label htmlFor={fields.keepGps.id}>Keep where photos were taken (GPS)</label>
        <p id={`${fields.keepGps.id}-hint`} className="hint">
          Off: Koala takes the position out of each photo as it comes in (its original file is kept without it; the picture and its other
          details stay as they were) and shows none. On: photos uploaded from now on keep the position their camera recorded, in their file
          too, shown to everyone in the project. Turning it off deletes every position Koala recorded for the project, and takes them out of
          the files of photos uploaded while it was on (in the background).
        </p>
      </div>
      <div className="form-actions">
        <SubmitButton pending={pending} pendingText="Saving…">
          Save
        </SubmitButton>
        <CancelLink to={cancelTo} />
      </div>
    </Form>
  );
}
