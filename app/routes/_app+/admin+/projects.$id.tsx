import { parseWithZod } from "@conform-to/zod";
import { type ActionFunctionArgs, type LoaderFunctionArgs } from "@remix-run/node";
import { Form, useActionData, useLoaderData } from "@remix-run/react";
import { FormError, IntentButton } from "~/components/forms";
import { ProjectForm } from "~/components/project-form";
import { MembershipForm, RoleSelect } from "~/components/membership-form";
import { adminActor } from "~/routes/_app+/admin+/admin.server";
import { parseId } from "~/models/scope.server";
import { AdminProjectActionSchema, memberRoleOf, parseConsoleForm } from "~/lib/account-schemas";
import { ConflictError, HttpError, NotFoundError } from "~/lib/errors";
import { formError, page, readForm, redirectWithToast, refused } from "~/web/http.server";
import { formErrorsOf, resultOf } from "~/lib/form-answer";
import { logoUrl } from "~/lib/media";
import { ProjectEditSchema } from "~/lib/schemas";
import { setMembership } from "~/models/admin-users.server";
import { editProject, projectMembers } from "~/models/projects.server";
import { projectScope } from "~/models/scope.server";
import { findUserByEmail } from "~/models/users.server";
import { replaceProjectLogo } from "~/services/image-files.server";

/** One project: rename, WSC flag and source (the managers' edit form), logo, members and their roles. */
export const loader = page(async ({ request, params, context }: LoaderFunctionArgs) => {
  const scope = await projectScope(await adminActor(request, context), params.id);
  const { id, name, wsc, wscSource, keepGps, logoKey } = scope.project;
  return {
    project: { id, name, wsc, source: wscSource ?? "", keepGps, logo: logoKey ? logoUrl(id, logoKey) : null },
    members: await projectMembers(scope),
  };
});

export const action = page(async ({ request, params, context }: ActionFunctionArgs) => {
  const actor = await adminActor(request, context);
  const scope = await projectScope(actor, params.id);
  const id = scope.project.id;
  const form = await readForm(request);
  const back = (title: string) => redirectWithToast(request, `/admin/projects/${id}`, { kind: "success", title });
  if (form.get("intent") !== null) {
    const v = parseConsoleForm(AdminProjectActionSchema, form);
    switch (v.intent) {
      case "logo": {
        if (!v.logo || v.logo.size === 0) return refused("logo", formError("Please choose an image file."));
        try {
          await replaceProjectLogo(actor, id, Buffer.from(await v.logo.arrayBuffer()));
        } catch (err) {
          if (err instanceof HttpError) return refused("logo", formError(err.message), err.status);
          throw err;
        }
        return back("Logo saved");
      }
      case "logo-remove":
        await replaceProjectLogo(actor, id, null);
        return back("Logo removed");
      case "member-add": {
        const user = await findUserByEmail(v.email);
        if (!user) return refused("member-add", formError("There is no user with this e-mail address."));
        await setMembership(actor, user.id, id, v.role);
        return back("Member added");
      }
      case "member": {
        const userId = parseId(v.user);
        if (userId === null) throw new NotFoundError("User not found");
        await setMembership(actor, userId, id, v.remove ? null : memberRoleOf(v.role));
        return back(v.remove ? "Member removed" : "Role saved");
      }
    }
  }
  // The edit form (the managers' ProjectForm) posts no intent; its answers say "edit".
  const submission = parseWithZod(form, { schema: ProjectEditSchema });
  if (submission.status !== "success") return refused("edit", submission.reply());
  try {
    const { name, wsc, source, keepGps, keepGpsWas } = submission.value;
    await editProject(scope, name, { wsc, source, keepGps: keepGps === keepGpsWas ? undefined : keepGps });
  } catch (err) {
    if (!(err instanceof ConflictError)) throw err;
    return refused("edit", submission.reply({ fieldErrors: { name: [err.message] } }), 409);
  }
  return back("Project saved");
});

export default function AdminProject() {
  const { project, members } = useLoaderData<typeof loader>();
  const answer = useActionData<typeof action>();
  return (
    <section aria-labelledby="project-heading">
      <h2 id="project-heading">{project.name}</h2>
      <ProjectForm defaultValue={project} lastResult={resultOf(answer, "edit")} cancelTo="/admin/projects" />
      <h3>Logo</h3>
      {project.logo ? (
        <img src={project.logo} alt={`Logo of ${project.name}`} width={96} height={96} className="admin-logo" />
      ) : (
        <p>No logo: the project shows its initials.</p>
      )}
      <Form method="post" encType="multipart/form-data" className="inline-form" aria-label="Logo">
        <FormError id="logo-error" errors={formErrorsOf(resultOf(answer, "logo"))} />
        <input type="hidden" name="intent" value="logo" />
        <label htmlFor="logo-file">Logo image (PNG, JPEG or WebP, up to 1 MB)</label>
        <input id="logo-file" name="logo" type="file" accept="image/png,image/jpeg,image/webp" />
        <button type="submit" className="btn">
          Upload logo
        </button>
      </Form>
      {project.logo ? <IntentButton intent="logo-remove">Remove logo</IntentButton> : null}
      <h3>Members</h3>
      <FormError id="member-error" errors={formErrorsOf(resultOf(answer, "member-add"))} />
      <ul className="plain-list">
        {members.map((m) => (
          <li key={m.id}>
            <MembershipForm
              intent="member"
              target={{ user: String(m.id) }}
              id={`role-${m.id}`}
              label={`${m.name} ${m.surname} (${m.email})${m.status === "disabled" ? " — disabled" : ""}`}
              role={m.role}
              removeLabel={`Remove ${m.email}`}
            />
          </li>
        ))}
      </ul>
      <Form method="post" className="inline-form" aria-label="Add member">
        <input type="hidden" name="intent" value="member-add" />
        <label htmlFor="member-email">Add member (e-mail)</label>
        <input id="member-email" name="email" type="email" maxLength={100} required />
        <label htmlFor="member-role">as</label>
        <RoleSelect id="member-role" defaultValue="viewer" />
        <button type="submit" className="btn">
          Add member
        </button>
      </Form>
    </section>
  );
}
