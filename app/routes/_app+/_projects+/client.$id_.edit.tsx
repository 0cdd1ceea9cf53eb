import { parseWithZod } from "@conform-to/zod";
import { data, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { useActionData, useLoaderData } from "@remix-run/react";
import { GeneralErrorBoundary } from "~/components/error-boundary";
import { ProjectForm } from "~/components/project-form";
import { ConflictError } from "~/lib/errors";
import { headerOf } from "~/web/header.server";
import { page, readForm, redirectWithToast } from "~/web/http.server";
import { ProjectEditSchema } from "~/lib/schemas";
import { editProject } from "~/models/projects.server";
import { projectScopeOf } from "~/web/scopes.server";

export const meta: MetaFunction = () => [{ title: "Edit project | Koala" }];

/** The project edit dialog (managers): name, WSC flag and source, GPS positions kept or not; no Delete. */
export const loader = page(async ({ request, params, context }: LoaderFunctionArgs) => {
  const scope = await projectScopeOf({ request, context }, params.id, { need: "manage" });
  const { id, name, wsc, wscSource, keepGps } = scope.project;
  return { project: { id, name, wsc, source: wscSource ?? "", keepGps }, header: headerOf(scope) };
});

export const action = page(async ({ request, params, context }: ActionFunctionArgs) => {
  const scope = await projectScopeOf({ request, context }, params.id, { need: "manage" });
  const submission = parseWithZod(await readForm(request), { schema: ProjectEditSchema });
  if (submission.status !== "success") return data({ result: submission.reply() }, { status: 400 });
  try {
    const { name, wsc, source, keepGps, keepGpsWas } = submission.value;
    await editProject(scope, name, { wsc, source, keepGps: keepGps === keepGpsWas ? undefined : keepGps });
  } catch (err) {
    if (!(err instanceof ConflictError)) throw err;
    return data({ result: submission.reply({ fieldErrors: { name: [err.message] } }) }, { status: 409 });
  }
  return redirectWithToast(request, `/client/${scope.project.id}`, { kind: "success", title: "Project saved" });
});

export default function EditProject() {
  const { project } = useLoaderData<typeof loader>();
  const answer = useActionData<typeof action>();
  return (
    <section className="confirm-page" aria-labelledby="edit-project-heading">
      <h1 id="edit-project-heading">Edit project</h1>
      <ProjectForm defaultValue={project} lastResult={answer?.result} cancelTo={`/client/${project.id}`} />
    </section>
  );
}

export const ErrorBoundary = GeneralErrorBoundary;
