import { type ActionFunctionArgs, type LoaderFunctionArgs } from "@remix-run/node";
import { Form, useLoaderData } from "@remix-run/react";
import { IntentButton } from "~/components/forms";
import { MembershipForm, RoleSelect } from "~/components/membership-form";
import { adminActor } from "~/routes/_app+/admin+/admin.server";
import { parseId } from "~/models/scope.server";
import { AdminUserActionSchema, memberRoleOf, parseConsoleForm } from "~/lib/account-schemas";
import { NotFoundError } from "~/lib/errors";
import { page, readForm, redirectWithToast } from "~/web/http.server";
import { resetUserTotp, setMembership, setUserRole, setUserStatus, userDetail } from "~/models/admin-users.server";
import { listProjects } from "~/models/projects.server";
import { adminSendLink } from "~/services/accounts.server";

const userId = (raw: string | undefined) => {
  const id = parseId(raw);
  if (id === null) throw new NotFoundError("User not found");
  return id;
};

/** One user: memberships and their roles, the global role, disable/enable, TOTP reset, a sign-in link. */
export const loader = page(async ({ request, params, context }: LoaderFunctionArgs) => {
  const actor = await adminActor(request, context);
  const [detail, projects] = await Promise.all([userDetail(actor, userId(params.id)), listProjects(actor)]);
  return { ...detail, projects: projects.map((p) => ({ id: p.id, name: p.name })), self: actor.id === detail.user.id };
});

export const action = page(async ({ request, params, context }: ActionFunctionArgs) => {
  const actor = await adminActor(request, context);
  const id = userId(params.id);
  const v = parseConsoleForm(AdminUserActionSchema, await readForm(request));
  const back = (title: string) => redirectWithToast(request, `/admin/users/${id}`, { kind: "success", title });
  switch (v.intent) {
    case "membership": {
      const projectId = parseId(v.project);
      if (projectId === null) throw new NotFoundError("Project not found");
      const role = v.remove ? null : memberRoleOf(v.role);
      await setMembership(actor, id, projectId, role);
      return back(role ? "Membership saved" : "Membership removed");
    }
    case "role":
      await setUserRole(actor, id, v.role);
      return back("Role saved");
    case "disable":
      await setUserStatus(actor, id, "disabled");
      return back("User disabled; their sessions have ended");
    case "enable":
      await setUserStatus(actor, id, "active");
      return back("User enabled");
    case "reset-totp":
      await resetUserTotp(actor, id);
      return back("Two-factor authentication reset");
    case "send-link":
      await adminSendLink(actor, id);
      return back("Sign-in link sent");
  }
});

export default function UserPage() {
  const { user, memberships, projects, self } = useLoaderData<typeof loader>();
  const others = projects.filter((p) => !memberships.some((m) => m.projectId === p.id));
  return (
    <section aria-labelledby="user-heading">
      <h2 id="user-heading">
        {user.name} {user.surname}
      </h2>
      <dl className="summary-list">
        <div>
          <dt>Email</dt>
          <dd>{user.email}</dd>
        </div>
        <div>
          <dt>Status</dt>
          <dd>{user.status}</dd>
        </div>
        <div>
          <dt>Two-factor</dt>
          <dd>{user.totpEnrolled ? "enrolled" : "not enrolled"}</dd>
        </div>
      </dl>
      <h3>Memberships</h3>
      {memberships.length === 0 ? <p>Not a member of any project.</p> : null}
      <ul className="plain-list">
        {memberships.map((m) => (
          <li key={m.projectId}>
            <MembershipForm
              intent="membership"
              target={{ project: String(m.projectId) }}
              id={`member-${m.projectId}`}
              label={m.projectName}
              role={m.role}
              removeLabel={`Remove from ${m.projectName}`}
            />
          </li>
        ))}
      </ul>
      {others.length ? (
        <Form method="post" className="inline-form" aria-label="Add to a project">
          <input type="hidden" name="intent" value="membership" />
          <label htmlFor="add-project">Add to project</label>
          <select id="add-project" name="project">
            {others.map((p) => (
              <option key={p.id} value={p.id}>
                {p.name}
              </option>
            ))}
          </select>
          <label htmlFor="add-role">as</label>
          <RoleSelect id="add-role" defaultValue="viewer" />
          <button type="submit" className="btn">
            Add
          </button>
        </Form>
      ) : null}
      <h3>Account</h3>
      <div className="form-actions">
        {self ? null : (
          <IntentButton intent="role" fields={{ role: user.role === "admin" ? "user" : "admin" }}>
            {user.role === "admin" ? "Remove admin role" : "Make admin"}
          </IntentButton>
        )}
        {self ? null : (
          <IntentButton
            intent={user.status === "disabled" ? "enable" : "disable"}
            className={user.status === "disabled" ? "btn" : "btn btn-danger"}
          >
            {user.status === "disabled" ? "Enable user" : "Disable user"}
          </IntentButton>
        )}
        {user.totpEnrolled ? <IntentButton intent="reset-totp">Reset TOTP</IntentButton> : null}
        {user.status === "active" ? <IntentButton intent="send-link">Send sign-in link</IntentButton> : null}
      </div>
    </section>
  );
}
