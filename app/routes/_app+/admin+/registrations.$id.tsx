import { parseWithZod } from "@conform-to/zod";
import { type ActionFunctionArgs, type LoaderFunctionArgs } from "@remix-run/node";
import { Form, useActionData, useLoaderData } from "@remix-run/react";
import { CancelLink, FormError } from "~/components/forms";
import { RoleSelect } from "~/components/membership-form";
import { adminActor } from "~/routes/_app+/admin+/admin.server";
import { parseId } from "~/models/scope.server";
import { APPROVE_MESSAGES, formatMobile, membershipsOf, projectsAskedFor, REJECT_REASON_MAX, RejectSchema } from "~/lib/account-schemas";
import { NotFoundError } from "~/lib/errors";
import { formError, page, readForm, redirectWithToast, refused } from "~/web/http.server";
import { formErrorsOf, resultOf } from "~/lib/form-answer";
import { listProjects } from "~/models/projects.server";
import { offsetLabel, referenceLists } from "~/models/reference.server";
import { pendingRegistration } from "~/models/registrations.server";
import { approve, reject } from "~/services/accounts.server";
import { DataTable } from "~/components/data-table";
import { currentZoneName } from "~/db/reference-data";

const registrationId = (raw: string | undefined) => {
  const id = parseId(raw);
  if (id === null) throw new NotFoundError("Application not found");
  return id;
};

/** One application: its details, Approve (a role per chosen project) and Reject (an optional reason, e-mailed). */
export const loader = page(async ({ request, params, context }: LoaderFunctionArgs) => {
  const actor = await adminActor(request, context);
  const reg = await pendingRegistration(actor, registrationId(params.id));
  const projects = await listProjects(actor);
  const offset = reg.utc_offset === null ? "" : ` (${offsetLabel(reg.utc_offset)})`;
  const country = (await referenceLists()).countries.find((c) => c.code === reg.country)?.name ?? reg.country;
  // What they asked for comes first, preselected with the viewer role; the admin changes or adds to it.
  const asked = projectsAskedFor(reg.client, projects);
  const chosen = new Set(asked.ids);
  return {
    reg: { ...reg, timezone: currentZoneName(reg.timezone), created_at: Number(reg.created_at), offset, countryName: country },
    projects: projects.map((p) => ({ id: p.id, name: p.name, asked: chosen.has(p.id) })).sort((a, b) => Number(b.asked) - Number(a.asked)),
    unmatched: asked.unmatched,
  };
});

export const action = page(async ({ request, params, context }: ActionFunctionArgs) => {
  const actor = await adminActor(request, context);
  const id = registrationId(params.id);
  const form = await readForm(request);
  if (form.get("intent") === "approve") {
    const memberships = membershipsOf(form);
    if (memberships.length === 0) return refused("approve", formError(APPROVE_MESSAGES.none));
    const user = await approve(actor, id, memberships);
    return redirectWithToast(request, "/admin", {
      kind: "success",
      title: `${user.email} approved`,
      description: "A sign-in link is on its way to them.",
    });
  }
  if (form.get("intent") === "reject") {
    const parsed = parseWithZod(form, { schema: RejectSchema });
    if (parsed.status !== "success") return refused("reject", formError(parsed.error?.reason?.[0] ?? "Data format error"));
    await reject(actor, id, parsed.value.reason || null);
    return redirectWithToast(request, "/admin", { kind: "success", title: "Application rejected" });
  }
  throw new NotFoundError("Page not found");
});

export default function Registration() {
  const { reg, projects, unmatched } = useLoaderData<typeof loader>();
  const answer = useActionData<typeof action>();
  const details: [string, string][] = [
    ["Name", `${reg.name} ${reg.surname}`],
    ["Email", reg.email],
    ["Mobile", `${reg.country_code} ${formatMobile(reg.mobile)}`],
    ["Country", reg.countryName],
    ["Timezone", `${reg.timezone}${reg.offset}`],
    ["Language", `${reg.language} (${reg.iso_code})`],
    ["Org unit", reg.org_unit],
    ["Projects asked for", reg.client],
    ["Use", reg.sim_use],
    ["Received", new Date(reg.created_at).toISOString().replace("T", " ").slice(0, 16) + " UTC"],
  ];
  return (
    <section aria-labelledby="registration-heading">
      <h2 id="registration-heading">
        Application of {reg.name} {reg.surname}
      </h2>
      <dl className="summary-list">
        {details.map(([k, v]) => (
          <div key={k}>
            <dt>{k}</dt>
            <dd>{v}</dd>
          </div>
        ))}
      </dl>
      <Form method="post" aria-labelledby="approve-heading">
        <h3 id="approve-heading">Approve</h3>
        <p className="muted">
          Choose a role in each project the new user should see. The projects whose name matches what they asked for come first, with the
          viewer role.
        </p>
        {unmatched.length ? (
          <p>
            Asked for, but no project has this name: <strong>{unmatched.join(", ")}</strong>
          </p>
        ) : null}
        <FormError id="approve-error" errors={formErrorsOf(resultOf(answer, "approve"))} />
        <DataTable columns={["Project", "Role"]} labelledBy="approve-heading">
          {projects.map((p) => (
            <tr key={p.id}>
              <td>
                <label htmlFor={`role-${p.id}`}>{p.name}</label>
              </td>
              <td>
                <RoleSelect id={`role-${p.id}`} name={`role-${p.id}`} defaultValue={p.asked ? "viewer" : ""} none="No access" />
              </td>
            </tr>
          ))}
        </DataTable>
        <div className="form-actions">
          <button type="submit" name="intent" value="approve" className="btn btn-primary">
            Approve
          </button>
          <CancelLink to="/admin" />
        </div>
      </Form>
      <Form method="post" aria-labelledby="reject-heading">
        <h3 id="reject-heading">Reject</h3>
        <FormError id="reject-error" errors={formErrorsOf(resultOf(answer, "reject"))} />
        <div className="field">
          <label htmlFor="reject-reason">Reason (optional, e-mailed to the applicant)</label>
          <textarea id="reject-reason" name="reason" maxLength={REJECT_REASON_MAX} rows={3} />
        </div>
        <button type="submit" name="intent" value="reject" className="btn btn-danger">
          Reject
        </button>
      </Form>
    </section>
  );
}
