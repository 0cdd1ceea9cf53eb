import { data, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Link, useActionData, useLoaderData } from "@remix-run/react";
import { CsvImportForm, ImportReportView } from "~/components/csv-import";
import { GeneralErrorBoundary } from "~/components/error-boundary";
import { CSV_MESSAGES } from "~/lib/attribute-rules";
import { CsvRefused, receiveCsvUpload } from "~/routes/_app+/_attributes+/csv-upload.server";
import { getErrorMessage, HttpError } from "~/lib/errors";
import { headerOf } from "~/web/header.server";
import { page, redirectWithToast } from "~/web/http.server";
import { log } from "~/lib/log.server";
import { uploadScope } from "~/routes/_app+/_upload+/upload-form.server";
import { importUploadedCsv, tempCsvPath } from "~/services/attribute-import.server";

export const meta: MetaFunction<typeof loader> = ({ data }) => [
  { title: `Import Attributes CSV · ${data?.project.name ?? "Project"} | Koala` },
];

/** /upload/:clientID/import — Import Attributes CSV (spec 2: the upload page's third tile); editors and managers. */
export const loader = page(async ({ request, params, context }: LoaderFunctionArgs) => {
  const scope = await uploadScope({ request, context }, params.clientID);
  return { project: { id: scope.project.id, name: scope.project.name }, header: headerOf(scope) };
});

const STATUS = { success: 200, errors: 400, "no-image-id": 406, unparseable: 400, unreadable: 400 } as const;

/**
 * The file streamed to a temporary file (wrong type or over 100 MB refused before it is stored), then checked and
 * applied at once when small ('success'), or left to a job when large ('success waiting': the job's page, an e-mail).
 */
export const action = page(async ({ request, params, context }: ActionFunctionArgs) => {
  const scope = await uploadScope({ request, context }, params.clientID);
  const file = await tempCsvPath();
  let name: string;
  try {
    name = await receiveCsvUpload(request, file);
  } catch (err) {
    if (err instanceof CsvRefused) return data({ refused: { title: err.title, detail: err.detail }, report: null }, { status: err.status });
    throw err;
  }
  let answer;
  try {
    answer = await importUploadedCsv(scope, file, name);
  } catch (err) {
    if (err instanceof HttpError) throw err;
    log.error("attribute import failed", { projectId: scope.project.id, error: getErrorMessage(err) });
    return data({ refused: { title: CSV_MESSAGES.importError, detail: CSV_MESSAGES.failed }, report: null }, { status: 500 });
  }
  if ("jobId" in answer)
    throw await redirectWithToast(request, `/jobs/${answer.jobId}`, {
      kind: "success",
      title: "Import started",
      description: "The file is processed in the background; an e-mail follows when it is done.",
    });
  const { report } = answer;
  if (report.outcome === "success")
    throw await redirectWithToast(request, `/upload/${scope.project.id}/import`, {
      kind: "success",
      title: "Attributes imported",
      description: `${report.values.toLocaleString("en")} values from ${report.rows.toLocaleString("en")} rows.`,
    });
  return data({ refused: null, report }, { status: STATUS[report.outcome] });
});

export default function ImportAttributes() {
  const { project } = useLoaderData<typeof loader>();
  const answer = useActionData<typeof action>();
  return (
    <section className="upload-page" aria-labelledby="import-heading">
      <p>
        <Link to={`/upload/${project.id}`}>← Upload</Link>
      </p>
      <h1 id="import-heading">Import Attributes CSV</h1>
      <p className="muted">{project.name}</p>
      {answer?.refused ? (
        <div className="form-error" role="alert">
          <strong>{answer.refused.title}</strong> {answer.refused.detail}
        </div>
      ) : null}
      {answer?.report ? <ImportReportView report={answer.report} /> : null}
      <CsvImportForm />
    </section>
  );
}

export const ErrorBoundary = GeneralErrorBoundary;
