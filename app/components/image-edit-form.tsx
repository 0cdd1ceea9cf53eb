import { getFormProps, type SubmissionResult } from "@conform-to/react";
import { Form } from "@remix-run/react";
import { useState } from "react";
import { mediaUrl } from "~/lib/media";
import { ImageEditSchema, KEYWORD_HINT, LIMITS } from "~/lib/schemas";
import { CancelLink, Field, FormError, SubmitButton, TextareaField, usePending, useSchemaForm } from "./forms";

export interface EditableImage {
  id: number;
  title: string;
  description: string;
  keywords: string[];
  ocr_text: string;
  ocr_by_machine: number;
  preview_key: string;
  version: number;
}

/**
 * Edit Image: title, description, keywords, OCR text and (in the image panel) rotation in 90° steps.
 * Rotate works without JavaScript: the button posts the form back with the turn added; with JavaScript it only
 * turns the preview. The turn is saved with everything else, as one new version.
 */
export function ImageEditForm({
  image,
  lastResult,
  rotate: initialRotate = 0,
  canRotate,
  cancelTo,
  submitLabel = "Save",
  hidden = {},
  postedVersion,
}: {
  image: EditableImage;
  lastResult?: SubmissionResult<string[]> | null;
  rotate?: number;
  canRotate: boolean;
  cancelTo: string;
  submitLabel?: string;
  /** Extra fields the action needs (the upload page's image id and pending list). */
  hidden?: Record<string, string>;
  /**
   * The version the edit started from, when the form comes back from the server (after Rotate without
   * JavaScript, or a refused save): kept, so a save can never silently overwrite a version saved meanwhile.
   */
  postedVersion?: number;
}) {
  const pending = usePending();
  const [rotate, setRotate] = useState(initialRotate);
  const [form, fields] = useSchemaForm(ImageEditSchema, {
    id: `edit-image-${image.id}`,
    lastResult,
    defaultValue: { title: image.title, description: image.description, keywords: image.keywords.join(", "), ocr: image.ocr_text },
  });
  return (
    <Form method="post" {...getFormProps(form)} className="edit-image-form">
      <input type="hidden" name="version" value={postedVersion || image.version} />
      {Object.entries(hidden).map(([name, value]) => (
        <input key={name} type="hidden" name={name} value={value} />
      ))}
      <input type="hidden" name="rotate" value={String(rotate)} />
      {/* Enter in a field submits the form's first submit button: make that Save, not Rotate. */}
      <button type="submit" name="intent" value="save" className="sr-only" tabIndex={-1} aria-hidden="true">
        Save
      </button>
      <FormError id={form.errorId} errors={form.errors} />
      <figure className="edit-image-preview">
        {/* A square frame: the turned preview stays inside it, clear of the buttons. */}
        <div className="edit-image-frame">
          {/* A class, not a style attribute: the CSP allows no inline styles in server-rendered HTML. */}
          <img src={mediaUrl(image.id, image.preview_key)} alt="" className={rotate ? `turned-${rotate}` : undefined} />
        </div>
        {canRotate ? (
          <figcaption>
            <button
              type="submit"
              name="intent"
              value="rotate"
              className="btn"
              formNoValidate
              onClick={(e) => {
                e.preventDefault();
                setRotate((r) => (r + 90) % 360);
              }}
            >
              Rotate 90°
            </button>
            <span role="status" className="muted">
              {rotate ? ` Turned ${rotate}° clockwise; saved with the rest.` : ""}
            </span>
          </figcaption>
        ) : null}
      </figure>
      <Field label="Title" field={fields.title} hint={`Up to ${LIMITS.title} characters.`} inputProps={{ maxLength: LIMITS.title }} />
      <TextareaField
        label="Description"
        field={fields.description}
        hint={`Up to ${LIMITS.description} characters.`}
        textareaProps={{ rows: 3, maxLength: LIMITS.description }}
      />
      <Field label="Keywords" field={fields.keywords} hint={KEYWORD_HINT} />
      <TextareaField
        label="OCR text"
        field={fields.ocr}
        hint={
          image.ocr_by_machine && image.ocr_text
            ? `Read from the picture by Koala. Text you change here is yours, and Koala never reads over it. Up to ${LIMITS.ocr} characters.`
            : `Up to ${LIMITS.ocr} characters.`
        }
        textareaProps={{ rows: 3, maxLength: LIMITS.ocr }}
      />
      <div className="form-actions">
        <SubmitButton name="intent" value="save" pending={pending} pendingText="Saving…">
          {submitLabel}
        </SubmitButton>
        <CancelLink to={cancelTo} />
      </div>
    </Form>
  );
}
