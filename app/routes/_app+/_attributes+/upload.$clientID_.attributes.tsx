import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link, useActionData, useLoaderData } from "@remix-run/react";
import { AttributesTable } from "~/components/attributes-table";
import { CreateAttributeForm } from "~/components/create-attribute-form";
import { GeneralErrorBoundary } from "~/components/error-boundary";
import { createFromForm, saveFromForm } from "~/routes/_app+/_attributes+/attributes-page.server";
import { InvalidError } from "~/lib/errors";
import { resultOf } from "~/lib/form-answer";
import { headerOf } from "~/web/header.server";
import { page, readForm } from "~/web/http.server";
import { uploadScope } from "~/routes/_app+/_upload+/upload-form.server";
import { attributesOf } from "~/models/attributes.server";

export const meta: MetaFunction<typeof loader> = ({ data }) => [
  { title: `Manage Attributes · ${data?.project.name ?? "Project"} | Koala` },
];

/** /upload/:clientID/attributes — Manage Attributes (spec 2: the upload page's tile; `wscEdit` for WSC projects). */
export const loader = page(async ({ request, params, context }: LoaderFunctionArgs) => {
  const scope = await uploadScope({ request, context }, params.clientID);
  return {
    project: { id: scope.project.id, name: scope.project.name, wsc: scope.project.wsc },
    attributes: await attributesOf(scope),
    canManage: scope.can.manage,
    header: headerOf(scope),
  };
});

/** Create Attribute (`intent=create`) and Save (`intent=save`); managers only. */
export const action = page(async ({ request, params, context }: ActionFunctionArgs) => {
  const scope = await uploadScope({ request, context }, params.clientID);
  const form = await readForm(request);
  const intent = form.get("intent");
  if (intent === "create") return createFromForm(request, scope, form);
  if (intent === "save") return saveFromForm(request, scope, form);
  throw new InvalidError("Data format is incorrect");
});

export default function ManageAttributes() {
  const { project, attributes, canManage } = useLoaderData<typeof loader>();
  const answer = useActionData<typeof action>();
  return (
    <section className="attributes-page" aria-labelledby="attributes-heading">
      <p>
        <Link to={`/upload/${project.id}`}>← Upload</Link>
      </p>
      <h1 id="attributes-heading">Manage Attributes</h1>
      <p className="muted">
        {project.name}
        {project.wsc ? " · WSC project: type 1 attributes come from its import source." : ""}
      </p>
      {canManage ? null : (
        <p className="muted">Only the project's managers change attributes; you can assign values from an image's panel.</p>
      )}
      {attributes.length ? (
        <AttributesTable
          projectId={project.id}
          attributes={attributes}
          canManage={canManage}
          answer={answer?.intent === "save" ? answer : null}
        />
      ) : (
        <p className="empty">No attributes found</p>
      )}
      {canManage ? <CreateAttributeForm names={attributes.map((a) => a.name)} lastResult={resultOf(answer, "create")} /> : null}
    </section>
  );
}

export const ErrorBoundary = GeneralErrorBoundary;
