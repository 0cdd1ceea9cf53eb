import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link, useLoaderData, useRevalidator } from "@remix-run/react";
import { useEffect } from "react";
import { ImportReportView } from "~/components/csv-import";
import { GeneralErrorBoundary } from "~/components/error-boundary";
import { NotFoundError } from "~/lib/errors";
import { page } from "~/web/http.server";
import { jobOf } from "~/models/jobs.server";
import type { ImportReport } from "~/services/attribute-import.server";
import { ReimportReportView } from "~/components/reimport-report";
import { IMPORT_JOB, REIMPORT_JOB } from "~/lib/job-types";
import type { ReimportReport } from "~/services/reimport.server";
import { parseId } from "~/models/scope.server";
import { requireActor } from "~/sessions.server";

interface JobResult {
  affected?: number;
  skipped?: number;
  action?: string;
  back?: string;
  report?: ImportReport;
  reimport?: ReimportReport;
}

/**
 * A finished job that did not do what it was asked: it failed, or it answered with a refusal of its own (an import
 * whose file had errors changed nothing; a re-import whose source could not be read).
 */
const failedJob = (job: { status: string; result: unknown }) => {
  const result = job.result as JobResult | null;
  return (
    job.status === "failed" || Boolean(result?.reimport?.failure) || (result?.report !== undefined && result.report.outcome !== "success")
  );
};

export const meta: MetaFunction<typeof loader> = ({ data }) => {
  const job = data?.job;
  return [
    {
      title: `${!job ? "Job" : job.status === "queued" || job.status === "running" ? "Working…" : failedJob(job) ? "Failed" : "Done"} | Koala`,
    },
  ];
};

const LABELS: Record<string, string> = {
  add: "Adding images to a board",
  copy: "Copying images to a board",
  move: "Moving images to another board",
  remove: "Removing images from a board",
  delete: "Deleting images",
  keywords: "Adding keywords",
  attributes: "Assigning attributes",
  import: "Importing attributes",
  reimport: "Re-importing the project",
};

/**
 * A long action's progress, for the person who started it (anyone else: 404). Without JavaScript the page
 * refreshes itself every two seconds while the job runs; with it, the data is reloaded in place.
 */
export const loader = page(async ({ request, params, context }: LoaderFunctionArgs) => {
  const actor = await requireActor(request, context);
  const id = parseId(params.id);
  const job = id ? await jobOf(actor.id, id) : null;
  if (!job) throw new NotFoundError("Job not found");
  return { job };
});

export default function JobPage() {
  const { job } = useLoaderData<typeof loader>();
  const revalidator = useRevalidator();
  const running = job.status === "queued" || job.status === "running";
  useEffect(() => {
    if (!running) return;
    const timer = setInterval(() => revalidator.state === "idle" && revalidator.revalidate(), 1000);
    return () => clearInterval(timer);
  }, [running, revalidator]);
  const result = job.result as unknown as JobResult | null;
  const action = job.type === IMPORT_JOB ? "import" : job.type === REIMPORT_JOB ? "reimport" : result?.action;
  const label = LABELS[action ?? ""] ?? "Working on your selection";
  const failed = failedJob(job);
  return (
    <section className="confirm-page" aria-labelledby="job-heading">
      {/* Without JavaScript the page reloads itself; with it the data is polled (a refresh scheduled by the first
          HTML would otherwise reload the page once more after the job ended). */}
      {running ? (
        <noscript>
          <meta httpEquiv="refresh" content="2" />
        </noscript>
      ) : null}
      <h1 id="job-heading">{running ? label : failed ? `${LABELS[action ?? ""] ?? "The action"} failed` : "Done"}</h1>
      {running ? (
        <>
          <p>This runs in the background; you may leave this page and come back.</p>
          <label className="job-progress">
            {!job.total
              ? "Starting…"
              : action === "import"
                ? `${Math.floor((job.progress / job.total) * 100)}% done (the file is checked, then written)`
                : `${job.progress.toLocaleString("en")} of ${job.total.toLocaleString("en")} images`}
            <progress max={job.total ?? undefined} value={job.total ? job.progress : undefined} />
          </label>
        </>
      ) : job.status === "done" && result?.report ? (
        <ImportReportView report={result.report} />
      ) : job.status === "done" && result?.reimport ? (
        <ReimportReportView report={result.reimport} />
      ) : job.status === "done" ? (
        <p role="status">
          {(result?.affected ?? 0).toLocaleString("en")} images changed
          {result?.skipped ? `, ${result.skipped.toLocaleString("en")} skipped (already there, or nothing to change)` : ""}.
        </p>
      ) : (
        <p role="alert">Nothing more was changed. Please try again; if it fails again, please contact support.</p>
      )}
      <p>
        <Link to={result?.back ?? "/dashboard"} className="btn">
          {/* Where the link goes is known once the job has answered; until then, the dashboard. */}
          {!result?.back
            ? "Back to dashboard"
            : action === "import"
              ? "Back to Import Attributes CSV"
              : action === "reimport"
                ? "Back to Upload"
                : "Back to the images"}
        </Link>
      </p>
    </section>
  );
}

export const ErrorBoundary = GeneralErrorBoundary;
