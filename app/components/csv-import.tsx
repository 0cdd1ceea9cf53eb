import { Form } from "@remix-run/react";
import { useState, type FormEvent } from "react";
import { CSV_MAX_BYTES, CSV_MESSAGES, csvRefusalTitle, VALUE_HINT } from "~/lib/attribute-rules";
import type { ImportReport } from "~/services/attribute-import.server";
import { SubmitButton, usePending } from "./forms";

/**
 * The import form: a plain multipart form (it works without JavaScript; the server checks type and size as the bytes
 * arrive). With JavaScript a wrong type or an oversized file is refused before anything is sent.
 */
export function CsvImportForm() {
  const pending = usePending();
  const [refused, setRefused] = useState<{ title: string; detail: string } | null>(null);
  const check = (file: File | undefined) => {
    if (!file) return null;
    if (!/\.csv$/i.test(file.name)) return { title: CSV_MESSAGES.type, detail: CSV_MESSAGES.typeHelp };
    if (file.size > CSV_MAX_BYTES) return { title: CSV_MESSAGES.size, detail: CSV_MESSAGES.sizeHelp };
    return null;
  };
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    const input = event.currentTarget.elements.namedItem("file") as HTMLInputElement | null;
    const problem = check(input?.files?.[0]);
    setRefused(problem);
    if (problem) event.preventDefault();
  };
  return (
    <Form method="post" encType="multipart/form-data" className="csv-import-form" onSubmit={onSubmit}>
      <div className="field">
        <label htmlFor="csv-file">CSV file</label>
        <input
          id="csv-file"
          name="file"
          type="file"
          accept=".csv,text/csv"
          required
          aria-describedby="csv-file-hint csv-file-error"
          onChange={(e) => setRefused(check(e.currentTarget.files?.[0]))}
        />
        <p id="csv-file-hint" className="muted field-hint">
          A .csv file up to 100 MB. First column: the image ID, on every row. Header row: the attributes' names (or smart names); Title and
          Keywords columns (as the export writes them) are left alone. Values: {VALUE_HINT}; an empty cell changes nothing. A file with any
          error changes nothing.
        </p>
        <p id="csv-file-error" className="field-error" role="alert">
          {refused ? `${refused.title}: ${refused.detail}` : ""}
        </p>
      </div>
      <SubmitButton pending={pending} pendingText="Importing…">
        Import
      </SubmitButton>
    </Form>
  );
}

/** What a refused file had wrong, line by line (up to the cap), or what a good one changed. */
export function ImportReportView({ report }: { report: ImportReport }) {
  if (report.outcome === "success")
    return (
      <p role="status">
        Imported {report.values.toLocaleString("en")} values from {report.rows.toLocaleString("en")} rows.
      </p>
    );
  const more = report.errorCount - report.errors.length;
  return (
    <div className="import-report" role="alert" aria-labelledby="import-report-heading">
      <h2 id="import-report-heading">{csvRefusalTitle(report.outcome)}</h2>
      <p>
        {report.outcome === "no-image-id"
          ? CSV_MESSAGES.noImageId
          : report.outcome === "unparseable"
            ? CSV_MESSAGES.parse
            : `Nothing was changed: ${report.errorCount.toLocaleString("en")} error${report.errorCount === 1 ? "" : "s"}.`}
      </p>
      <ul>
        {report.errors.map((e, i) => (
          <li key={i}>
            {e.line ? `Line ${e.line}: ` : ""}
            {e.message}
          </li>
        ))}
      </ul>
      {more > 0 ? <p>… and {more.toLocaleString("en")} more.</p> : null}
    </div>
  );
}
