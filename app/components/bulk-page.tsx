import { getFormProps, type SubmissionResult } from "@conform-to/react";
import { Form, useActionData, useLoaderData } from "@remix-run/react";
import { useState, type FormEvent, type ReactNode } from "react";
import { useHydrated } from "remix-utils/use-hydrated";
import type { BoardOption } from "~/models/boards.server";
import { asksSharedConfirmation, BULK_OPS, type BulkOp } from "~/lib/bulk-ops";
import { SharedConfirm } from "./shared-confirm";
import { BulkTargetSchema, DELETE_WORD, KEYWORD_HINT, KeywordsSchema, NEW_BOARD, REMOVE_WORD } from "~/lib/schemas";
import { CancelLink, Field, FieldShell, FormError, SubmitButton, usePending, useSchemaForm } from "./forms";
import { AssignAttributeSchema } from "~/lib/attribute-rules";
import { AssignAttributeFields } from "./assign-attribute-fields";
import { NoUserAttributes } from "./no-user-attributes";
import { TypedConfirmForm } from "./typed-confirm";

interface PageData {
  op: BulkOp;
  count: number;
  back: string;
  /** Where the Download and Download images data forms post (resource routes: the answer is the file). */
  files: { zip: string; csv: string };
  view: "project" | "board";
  projectId: number;
  boards: BoardOption[];
  /** Assign Attributes: the project's active user attributes. */
  attributeChoices: { id: number; name: string }[];
  sourceShared: boolean;
  step: number;
  maxDownload: number;
}
type LastResult = SubmissionResult<string[]> | null | undefined;
interface FormProps {
  page: PageData;
  lastResult: LastResult;
}

const images = (n: number) => `${n.toLocaleString("en")} image${n === 1 ? "" : "s"}`;

/** Each action's form, by op. */
const FORMS: Record<BulkOp, (props: FormProps) => ReactNode> = {
  download: DownloadForm,
  data: DataForm,
  export: ExportForm,
  add: TargetForm,
  copy: TargetForm,
  move: TargetForm,
  keywords: KeywordsForm,
  attributes: AssignForm,
  remove: RemoveForm,
  delete: DeleteSteps,
};

/**
 * The confirmation page of a bulk action, shared by the project and board views. Plain forms: every action works
 * without JavaScript; with it, a download shows its progress.
 */
export function BulkPage() {
  const page = useLoaderData<PageData>();
  const answer = useActionData<{ result: SubmissionResult<string[]> }>();
  const ActionForm = FORMS[page.op];
  return (
    <section className="confirm-page bulk-page" aria-labelledby="bulk-heading">
      <h1 id="bulk-heading">{BULK_OPS[page.op].title}</h1>
      <p className="bulk-count" role="status">
        {images(page.count)} selected
      </p>
      <ActionForm page={page} lastResult={answer?.result} />
    </section>
  );
}

function RemoveForm({ page, lastResult }: FormProps) {
  return (
    <TypedConfirmForm
      id="bulk-remove"
      word={REMOVE_WORD}
      submitLabel={`Remove ${images(page.count)}`}
      pendingText="Removing…"
      cancelTo={page.back}
      lastResult={lastResult}
    >
      <p>The images leave this board; they stay in the project.</p>
      {asksSharedConfirmation("remove", { source: page.sourceShared }) ? (
        <SharedConfirm errors={(lastResult?.error as Record<string, string[] | null> | undefined)?.confirmShared} />
      ) : null}
    </TypedConfirmForm>
  );
}

function DownloadForm({ page }: FormProps) {
  const hydrated = useHydrated();
  const [progress, setProgress] = useState<{ loaded: number; total: number } | null>(null);
  const [error, setError] = useState("");
  if (page.count > page.maxDownload)
    return (
      <>
        <p className="form-error" role="alert">
          You can only download {page.maxDownload} images at a time
        </p>
        <CancelLink to={page.back} />
      </>
    );

  // With JavaScript the ZIP is fetched with a progress bar, then saved; without, the browser downloads it itself.
  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    if (!hydrated) return;
    event.preventDefault();
    setError("");
    const form = event.currentTarget;
    try {
      const res = await fetch(form.action, { method: "POST", body: new FormData(form), credentials: "same-origin" });
      if (!res.ok || !res.body)
        throw new Error(res.status === 400 ? "You can only download 100 images at a time" : "Download failed. Please try again later.");
      const total = Number(res.headers.get("Content-Length") ?? 0);
      const reader = res.body.getReader();
      const chunks: Uint8Array[] = [];
      let loaded = 0;
      setProgress({ loaded, total });
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        chunks.push(value);
        loaded += value.length;
        setProgress({ loaded, total });
      }
      if (total && loaded !== total) throw new Error("Download failed. Please try again later.");
      const name = /filename\*=UTF-8''([^;]+)/.exec(res.headers.get("Content-Disposition") ?? "")?.[1];
      const url = URL.createObjectURL(new Blob(chunks as BlobPart[], { type: "application/zip" }));
      const a = document.createElement("a");
      a.href = url;
      a.download = name ? decodeURIComponent(name) : "images.zip";
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    } catch (err) {
      setError(err instanceof Error ? err.message : "Download Error");
      setProgress(null);
    }
  }
  return (
    <form method="post" action={page.files.zip} onSubmit={onSubmit} className="confirm-step">
      <p>One ZIP file with the original images and images.csv (their titles, keywords and attributes).</p>
      {progress ? (
        <label className="download-progress">
          {progress.total && progress.loaded >= progress.total ? "Downloaded" : "Downloading…"}
          <progress max={progress.total || undefined} value={progress.loaded} />
        </label>
      ) : null}
      <p className="field-error" role="alert">
        {error}
      </p>
      <div className="form-actions">
        <button type="submit" className="btn btn-primary">
          Download {images(page.count)}
        </button>
        <CancelLink to={page.back} />
      </div>
    </form>
  );
}

function DataForm({ page }: FormProps) {
  return (
    <form method="post" action={page.files.csv} className="confirm-step">
      <p>A CSV file (UTF-8, for spreadsheet programs) with each image's metadata and attribute values.</p>
      <div className="form-actions">
        <button type="submit" className="btn btn-primary">
          Download data of {images(page.count)}
        </button>
        <CancelLink to={page.back} />
      </div>
    </form>
  );
}

function ExportForm({ page }: FormProps) {
  const pending = usePending();
  return (
    <Form method="post" className="confirm-step">
      <p>A CSV file with each image's id, title, keywords and every attribute of the project, sent to your e-mail address.</p>
      <div className="form-actions">
        <SubmitButton pending={pending} pendingText="Sending…">
          Email attributes of {images(page.count)}
        </SubmitButton>
        <CancelLink to={page.back} />
      </div>
    </Form>
  );
}

function TargetForm({ page, lastResult }: FormProps) {
  const pending = usePending();
  const hydrated = useHydrated();
  const [form, fields] = useSchemaForm(BulkTargetSchema, {
    id: `bulk-${page.op}`,
    lastResult,
    shouldValidate: "onSubmit",
    defaultValue: { target: page.boards[0]?.id ?? NEW_BOARD },
  });
  const [target, setTarget] = useState(fields.target.initialValue ?? page.boards[0]?.id ?? NEW_BOARD);
  const verb = BULK_OPS[page.op].label;
  const shared = asksSharedConfirmation(page.op, {
    source: page.sourceShared,
    target: page.boards.find((b) => b.id === target)?.clientBoard ?? false,
  });
  return (
    <Form method="post" {...getFormProps(form)} className="confirm-step">
      <FormError id={form.errorId} errors={form.errors} />
      <FieldShell label={`${verb} to`} field={fields.target}>
        <select
          id={fields.target.id}
          name={fields.target.name}
          value={target}
          onChange={(e) => setTarget(e.currentTarget.value)}
          aria-invalid={fields.target.errors ? true : undefined}
          aria-describedby={fields.target.errors ? fields.target.errorId : undefined}
        >
          {page.boards.map((b) => (
            <option key={b.id} value={b.id}>
              {b.title}
              {b.clientBoard ? " (client-level board)" : ""}
            </option>
          ))}
          <option value={NEW_BOARD}>A new board…</option>
        </select>
      </FieldShell>
      {!hydrated || target === NEW_BOARD ? (
        <Field
          label="New board name"
          field={fields.newBoard}
          hint="When “A new board” is chosen: 3 to 64 characters, without ( ) & @ $ | % ~."
          inputProps={{ maxLength: 64, autoComplete: "off" }}
        />
      ) : null}
      {shared || fields.confirmShared.errors ? <SharedConfirm errors={fields.confirmShared.errors} /> : null}
      <p className="muted">Images already on the board are skipped and counted.</p>
      <div className="form-actions">
        <SubmitButton pending={pending} pendingText="Working…">
          {verb} {images(page.count)}
        </SubmitButton>
        <CancelLink to={page.back} />
      </div>
    </Form>
  );
}

function KeywordsForm({ page, lastResult }: FormProps) {
  const pending = usePending();
  const [form, fields] = useSchemaForm(KeywordsSchema, { id: "bulk-keywords", lastResult });
  return (
    <Form method="post" {...getFormProps(form)} className="confirm-step">
      <FormError id={form.errorId} errors={form.errors} />
      <Field label="Keywords" field={fields.keywords} hint={KEYWORD_HINT} inputProps={{ autoComplete: "off", autoFocus: true }} />
      <div className="form-actions">
        <SubmitButton pending={pending} pendingText="Adding…">
          Add to {images(page.count)}
        </SubmitButton>
        <CancelLink to={page.back} />
      </div>
    </Form>
  );
}

/** Assign Attributes: one value of a user attribute on every selected image; a client-level board asks first. */
function AssignForm({ page, lastResult }: FormProps) {
  const pending = usePending();
  const [form, fields] = useSchemaForm(AssignAttributeSchema, { id: "bulk-attributes", lastResult });
  if (!page.attributeChoices.length) return <NoUserAttributes projectId={page.projectId} />;
  return (
    <Form method="post" {...getFormProps(form)} className="confirm-step">
      <FormError id={form.errorId} errors={form.errors} />
      <AssignAttributeFields choices={page.attributeChoices} fields={fields} />
      {asksSharedConfirmation("attributes", { source: page.sourceShared }) ? <SharedConfirm errors={fields.confirmShared.errors} /> : null}
      <p className="muted">Images that already hold a value of the attribute keep it, unless Replace is ticked.</p>
      <div className="form-actions">
        <SubmitButton pending={pending} pendingText="Assigning…">
          Assign to {images(page.count)}
        </SubmitButton>
        <CancelLink to={page.back} />
      </div>
    </Form>
  );
}

/** Delete takes two confirmations (spec): this page, then typing DELETE. */
function DeleteSteps({ page, lastResult }: FormProps) {
  if (page.step === 1)
    return (
      <Form method="get" className="confirm-step">
        <p>Delete {images(page.count)} from the project? They also leave every board they are pinned to.</p>
        <input type="hidden" name="step" value="2" />
        <div className="form-actions">
          <button type="submit" className="btn btn-danger">
            Yes, delete
          </button>
          <CancelLink to={page.back} />
        </div>
      </Form>
    );
  return (
    <TypedConfirmForm
      id="bulk-delete"
      word={DELETE_WORD}
      submitLabel={`Delete ${images(page.count)}`}
      pendingText="Deleting…"
      cancelTo={page.back}
      lastResult={lastResult}
    >
      <p>This cannot be undone.</p>
    </TypedConfirmForm>
  );
}
