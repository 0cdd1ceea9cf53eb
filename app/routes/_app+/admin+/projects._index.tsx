import { getFormProps } from "@conform-to/react";
import { parseWithZod } from "@conform-to/zod";
import { data, type ActionFunctionArgs, type LoaderFunctionArgs } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData } from "@remix-run/react";
import { Field, FormError, SubmitButton, usePending, useSchemaForm } from "~/components/forms";
import { NAME_HINT } from "~/components/name-form";
import { adminActor } from "~/routes/_app+/admin+/admin.server";
import { ConflictError } from "~/lib/errors";
import { page, readForm, redirectWithToast } from "~/web/http.server";
import { ProjectNameSchema } from "~/lib/schemas";
import { adminCreateProject, allProjects } from "~/models/projects.server";
import { DataTable } from "~/components/data-table";

/** Projects: every project with its number of members, and Create. */
export const loader = page(async ({ request, context }: LoaderFunctionArgs) => {
  const projects = await allProjects(await adminActor(request, context));
  return { projects: projects.map((p) => ({ id: p.id, name: p.name, wsc: p.wsc === 1, members: Number(p.members) })) };
});

export const action = page(async ({ request, context }: ActionFunctionArgs) => {
  const actor = await adminActor(request, context);
  const submission = parseWithZod(await readForm(request), { schema: ProjectNameSchema });
  if (submission.status !== "success") return data({ result: submission.reply() }, { status: 400 });
  try {
    const id = await adminCreateProject(actor, submission.value.name);
    return redirectWithToast(request, `/admin/projects/${id}`, { kind: "success", title: "Project created" });
  } catch (err) {
    if (!(err instanceof ConflictError)) throw err;
    return data({ result: submission.reply({ fieldErrors: { name: [err.message] } }) }, { status: 409 });
  }
});

export default function Projects() {
  const { projects } = useLoaderData<typeof loader>();
  const answer = useActionData<typeof action>();
  const pending = usePending();
  const [form, fields] = useSchemaForm(ProjectNameSchema, { id: "create-project", lastResult: answer?.result });
  return (
    <section aria-labelledby="projects-heading">
      <h2 id="projects-heading">Projects</h2>
      <Form method="post" {...getFormProps(form)} aria-label="Create project">
        <FormError id={form.errorId} errors={form.errors} />
        <Field label="New project name" field={fields.name} hint={NAME_HINT} inputProps={{ maxLength: 64, autoComplete: "off" }} />
        <SubmitButton pending={pending} pendingText="Creating…">
          Create project
        </SubmitButton>
      </Form>
      <DataTable columns={["Project", "WSC", "Members"]} labelledBy="projects-heading">
        {projects.map((p) => (
          <tr key={p.id}>
            <td>
              <Link to={`/admin/projects/${p.id}`}>{p.name}</Link>
            </td>
            <td>{p.wsc ? "yes" : "no"}</td>
            <td>{p.members}</td>
          </tr>
        ))}
      </DataTable>
    </section>
  );
}
