import { parseWithZod } from "@conform-to/zod";
import { data, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Link, useActionData, useLoaderData } from "@remix-run/react";
import { GeneralErrorBoundary } from "~/components/error-boundary";
import { TypedConfirmForm } from "~/components/typed-confirm";
import { ConflictError, getErrorMessage } from "~/lib/errors";
import { headerOf } from "~/web/header.server";
import { page, readForm, redirectWithToast } from "~/web/http.server";
import { log } from "~/lib/log.server";
import { REIMPORT_MESSAGES, typedConfirmation } from "~/lib/schemas";
import { shownUrl } from "~/lib/wsc-manifest";
import { uploadScope } from "~/routes/_app+/_upload+/upload-form.server";
import { startReimport } from "~/services/reimport.server";

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: `Re-import · ${data?.project.name ?? "Project"} | Koala` }];

/** /upload/:clientID/reimport — the upload page's Re-import tile (spec 2); managers only, like the project's edit. */
export const loader = page(async ({ request, params, context }: LoaderFunctionArgs) => {
  const scope = await uploadScope({ request, context }, params.clientID, { need: "manage" });
  const { id, name, wsc, wscSource } = scope.project;
  return { project: { id, name, source: wsc && wscSource ? shownUrl(wscSource) : null }, header: headerOf(scope) };
});

/**
 * The project's name typed exactly, then the job is queued and its page opened ('Re-import request sent'); 409
 * while one runs; 'Re-Import request failed' when it could not be queued. 201 / 202 (normal / WSC) in the spec's
 * call become the job page's redirect, with the kind in the toast.
 */
export const action = page(async ({ request, params, context }: ActionFunctionArgs) => {
  const scope = await uploadScope({ request, context }, params.clientID, { need: "manage" });
  const submission = parseWithZod(await readForm(request), {
    schema: typedConfirmation(scope.project.name, REIMPORT_MESSAGES.mismatch, REIMPORT_MESSAGES.empty),
  });
  if (submission.status !== "success") return data({ result: submission.reply(), failed: null }, { status: 400 });
  let jobId: number;
  try {
    jobId = await startReimport(scope);
  } catch (err) {
    if (err instanceof ConflictError)
      return data({ result: submission.reply({ formErrors: [err.message] }), failed: null }, { status: 409 });
    log.error("re-import not queued", { projectId: scope.project.id, error: getErrorMessage(err) });
    return data({ result: null, failed: REIMPORT_MESSAGES.failed }, { status: 500 });
  }
  throw await redirectWithToast(request, `/jobs/${jobId}`, {
    kind: "success",
    title: REIMPORT_MESSAGES.sent,
    description: REIMPORT_MESSAGES.sentDetail,
  });
});

export default function Reimport() {
  const { project } = useLoaderData<typeof loader>();
  const answer = useActionData<typeof action>();
  return (
    <section className="confirm-page" aria-labelledby="reimport-heading">
      <p>
        <Link to={`/upload/${project.id}`}>← Upload</Link>
      </p>
      <h1 id="reimport-heading">Re-import {project.name}</h1>
      {project.source ? (
        <p>
          This is a WSC project: its source <code>{project.source}</code> is read again. New images are added, images already here (the same
          file) take the source&apos;s title, keywords and WSC attributes.
        </p>
      ) : (
        <p>
          Every image&apos;s thumbnail, preview and search index are made again from its original. Titles, keywords and attributes stay as
          they are.
        </p>
      )}
      <p>It runs in the background; the next page shows its progress.</p>
      {answer?.failed ? (
        <div className="form-error" role="alert">
          <strong>{answer.failed}</strong> {REIMPORT_MESSAGES.failedDetail}
        </div>
      ) : null}
      <TypedConfirmForm
        id="reimport"
        word={project.name}
        message={REIMPORT_MESSAGES.mismatch}
        empty={REIMPORT_MESSAGES.empty}
        label="Type the client name to confirm"
        submitLabel="Re-import"
        pendingText="Sending…"
        cancelTo={`/upload/${project.id}`}
        lastResult={answer?.result}
      />
    </section>
  );
}

export const ErrorBoundary = GeneralErrorBoundary;
