import { type ActionFunctionArgs, type LoaderFunctionArgs } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData } from "@remix-run/react";
import { DataTable } from "~/components/data-table";
import { FormError, IntentButton } from "~/components/forms";
import { RoleSelect } from "~/components/membership-form";
import { parseConsoleForm, SSO_GROUP_MESSAGES, SsoGroupRoleActionSchema } from "~/lib/account-schemas";
import { ConflictError, InvalidError, NotFoundError } from "~/lib/errors";
import { formErrorsOf, resultOf } from "~/lib/form-answer";
import { allProjects } from "~/models/projects.server";
import { parseId } from "~/models/scope.server";
import { addGroupRole, groupRoles, removeGroupRole } from "~/models/sso.server";
import { adminActor } from "~/routes/_app+/admin+/admin.server";
import { backchannelUrl, callbackUrl, ssoProviders } from "~/services/oidc.server";
import { config } from "~/config.server";
import { formError, page, readForm, redirectWithToast, refused } from "~/web/http.server";

/**
 * Company sign-in: the providers (the environment's, shown only; those added here, with a link to change them; no
 * secret is ever shown), and which provider group gives which role in which project.
 */
export const loader = page(async ({ request, context }: LoaderFunctionArgs) => {
  const actor = await adminActor(request, context);
  const [mappings, projects, providers] = await Promise.all([groupRoles(actor), allProjects(actor), ssoProviders()]);
  const fromEnv = new Set(config().oidc.providers.map((p) => p.id));
  return {
    providers: providers.map((p) => ({
      fromEnv: fromEnv.has(p.id),
      id: p.id,
      name: p.name,
      issuer: p.issuer,
      clientId: p.clientId,
      secret: p.clientSecret !== null,
      domains: p.domains,
      ssoOnly: p.ssoOnly,
      newUsers: p.newUsers,
      groupsClaim: p.groupsClaim,
      callback: callbackUrl(p),
      backchannel: backchannelUrl(p),
    })),
    mappings,
    projects: projects.map((p) => ({ id: p.id, name: p.name })),
  };
});

export const action = page(async ({ request, context }: ActionFunctionArgs) => {
  const actor = await adminActor(request, context);
  const v = parseConsoleForm(SsoGroupRoleActionSchema, await readForm(request));
  const back = (title: string) => redirectWithToast(request, "/admin/sign-in", { kind: "success", title });
  if (v.intent === "group-remove") {
    const id = parseId(v.id);
    if (id === null) throw new NotFoundError("Mapping not found");
    await removeGroupRole(actor, id);
    return back("Group removed");
  }
  if (!(await ssoProviders()).some((p) => p.id === v.provider)) throw new InvalidError("Unknown provider");
  if (!v.group) return refused("group-add", formError(SSO_GROUP_MESSAGES.group));
  const projectId = parseId(v.project);
  if (projectId === null) throw new NotFoundError("Project not found");
  try {
    await addGroupRole(actor, { provider: v.provider, group: v.group, projectId, role: v.role });
  } catch (error) {
    if (error instanceof ConflictError) return refused("group-add", formError(error.message), 409);
    throw error;
  }
  return back("Group added");
});

const NEW_PEOPLE = {
  create: "Account made on first sign-in",
  register: "Sent to the application form",
  refuse: "Refused until an admin makes the account",
} as const;

export default function AdminSignIn() {
  const { providers, mappings, projects } = useLoaderData<typeof loader>();
  const answer = useActionData<typeof action>();
  return (
    <section aria-labelledby="sign-in-heading">
      <h2 id="sign-in-heading">Company sign-in</h2>
      <p>
        <Link to="/admin/sign-in/providers/new" className="btn">
          Add a provider
        </Link>
      </p>
      {providers.length === 0 ? (
        <p>No provider yet. Add one here, or set them with the OIDC_PROVIDERS variables (docs/sso.md).</p>
      ) : (
        <>
          <h3 id="providers-heading">Providers</h3>
          <p>The client secrets are never shown. Providers set in the server&apos;s environment are changed there.</p>
          <DataTable
            labelledBy="providers-heading"
            columns={["Name", "Issuer", "E-mail domains", "Sign-in", "New people", "Redirect URI", "Back-channel logout URI", "Set in"]}
          >
            {providers.map((p) => (
              <tr key={p.id}>
                <td>
                  {p.name} ({p.id})
                </td>
                <td>{p.issuer}</td>
                <td>{p.domains.join(", ")}</td>
                <td>{p.ssoOnly ? "Only through this provider" : "Also password or e-mailed link"}</td>
                <td>{NEW_PEOPLE[p.newUsers]}</td>
                <td>{p.callback}</td>
                <td>{p.backchannel}</td>
                <td>
                  {p.fromEnv ? (
                    "Environment"
                  ) : (
                    <Link to={`/admin/sign-in/providers/${p.id}`}>
                      Change<span className="sr-only">{` ${p.name}`}</span>
                    </Link>
                  )}
                </td>
              </tr>
            ))}
          </DataTable>
          <h3 id="groups-heading">Groups and roles</h3>
          <p>
            A person gets, in every project listed here, the best role among their groups (the provider&apos;s groups claim, read at each
            sign-in), or no membership when no group of theirs gives one. A change here applies at once, by each person&apos;s groups at
            their last sign-in. A membership an admin gives by hand is never changed by the groups.
          </p>
          {mappings.length ? (
            <DataTable labelledBy="groups-heading" columns={["Provider", "Group", "Project", "Role", "Action"]}>
              {mappings.map((m) => (
                <tr key={m.id}>
                  <td>{providers.find((p) => p.id === m.provider)?.name ?? `${m.provider} (not configured)`}</td>
                  <td>{m.group_name}</td>
                  <td>{m.project_name}</td>
                  <td>{m.role}</td>
                  <td>
                    <IntentButton intent="group-remove" fields={{ id: String(m.id) }}>
                      Remove<span className="sr-only">{` ${m.group_name} from ${m.project_name}`}</span>
                    </IntentButton>
                  </td>
                </tr>
              ))}
            </DataTable>
          ) : (
            <p>No group gives a role yet: a first sign-in is refused until one does.</p>
          )}
          <Form method="post" className="inline-form" aria-label="Add group">
            <FormError id="group-add-error" errors={formErrorsOf(resultOf(answer, "group-add"))} />
            <input type="hidden" name="intent" value="group-add" />
            <label htmlFor="group-provider">Provider</label>
            <select id="group-provider" name="provider">
              {providers.map((p) => (
                <option key={p.id} value={p.id}>
                  {p.name}
                </option>
              ))}
            </select>
            <label htmlFor="group-name">Group</label>
            <input id="group-name" name="group" maxLength={200} />
            <label htmlFor="group-project">gives, in</label>
            <select id="group-project" name="project">
              {projects.map((p) => (
                <option key={p.id} value={p.id}>
                  {p.name}
                </option>
              ))}
            </select>
            <label htmlFor="group-role">the role</label>
            <RoleSelect id="group-role" defaultValue="viewer" />
            <button type="submit" className="btn">
              Add group
            </button>
          </Form>
        </>
      )}
    </section>
  );
}
