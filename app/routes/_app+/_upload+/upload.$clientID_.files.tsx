import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { useActionData, useLoaderData } from "@remix-run/react";
import { GeneralErrorBoundary } from "~/components/error-boundary";
import { UploadStart } from "~/components/uploader";
import { config } from "~/config.server";
import { HttpError } from "~/lib/errors";
import { page } from "~/web/http.server";
import { receiveFormUploads, uploadScope } from "~/routes/_app+/_upload+/upload-form.server";
import { uploadUrl } from "~/lib/uploads";

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: `Upload · ${data?.project.name ?? "Project"} | Koala` }];

/**
 * POST /upload/:clientID/files: the upload form without JavaScript (multipart). All files in → Edit Image (one) or
 * Multiple Uploaded Images (several); otherwise the upload page again with what happened to each file. A post the
 * server refuses as a whole (a file over the size limit, a malformed or interrupted body) comes back with its status
 * and the reason above the form.
 */
export const loader = page(async ({ request, params, context }: LoaderFunctionArgs) => {
  const scope = await uploadScope({ request, context }, params.clientID);
  return { project: { id: scope.project.id, name: scope.project.name, canManage: scope.can.manage }, maxBytes: config().maxImageBytes };
});

export const action = page(async ({ request, params, context }: ActionFunctionArgs) => {
  const scope = await uploadScope({ request, context }, params.clientID);
  let results;
  try {
    results = await receiveFormUploads(request, scope);
  } catch (err) {
    if (!(err instanceof HttpError) || err.status >= 500 || err.status === 404) throw err;
    return data({ results: null, error: err.message }, { status: err.status });
  }
  const done = results.flatMap((r) => (r.id ? [r.id] : []));
  if (!results.length) return data({ results: null, error: "Choose at least one image to upload." }, { status: 400 });
  if (done.length === results.length) throw redirect(uploadUrl(scope.project.id, done.length === 1 ? "edit" : "multiple", done));
  return data({ results, error: null }, { status: done.length ? 200 : 422 });
});

export default function UploadFilesResult() {
  const { project, maxBytes } = useLoaderData<typeof loader>();
  const answer = useActionData<typeof action>();
  return <UploadStart project={project} maxBytes={maxBytes} results={answer?.results} error={answer?.error} />;
}

export const ErrorBoundary = GeneralErrorBoundary;
