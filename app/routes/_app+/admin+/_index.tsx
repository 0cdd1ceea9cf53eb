import type { LoaderFunctionArgs } from "@remix-run/node";
import { Link, useLoaderData } from "@remix-run/react";
import { adminActor, noPosts } from "~/routes/_app+/admin+/admin.server";
import { parseId } from "~/models/scope.server";
import { page } from "~/web/http.server";
import { pendingRegistrations } from "~/models/registrations.server";
import { DataTable } from "~/components/data-table";

/** The registrations queue: applications waiting, oldest first, each opening its decision page. */
export const loader = page(async ({ request, context }: LoaderFunctionArgs) => {
  const actor = await adminActor(request, context);
  const after = parseId(new URL(request.url).searchParams.get("after")) ?? 0;
  const { rows, next } = await pendingRegistrations(actor, after);
  return {
    next,
    rows: rows.map((r) => ({
      id: r.id,
      name: `${r.name} ${r.surname}`,
      email: r.email,
      orgUnit: r.org_unit,
      client: r.client,
      at: Number(r.created_at),
    })),
  };
});

/** Nothing to post here: 404 to a non-admin like every console page, 405 to an admin. */
export const action = noPosts;

export default function Registrations() {
  const { rows, next } = useLoaderData<typeof loader>();
  return (
    <section aria-labelledby="registrations-heading">
      <h2 id="registrations-heading">Registrations waiting for approval</h2>
      {rows.length === 0 ? (
        <p>No applications are waiting.</p>
      ) : (
        <DataTable columns={["Applicant", "Email", "Org unit", "Projects", "Received"]} labelledBy="registrations-heading">
          {rows.map((r) => (
            <tr key={r.id}>
              <td>
                <Link to={`/admin/registrations/${r.id}`}>{r.name}</Link>
              </td>
              <td>{r.email}</td>
              <td>{r.orgUnit}</td>
              <td>{r.client}</td>
              <td>{new Date(r.at).toISOString().slice(0, 10)}</td>
            </tr>
          ))}
        </DataTable>
      )}
      {next ? <Link to={`/admin?after=${next}`}>Next page</Link> : null}
    </section>
  );
}
