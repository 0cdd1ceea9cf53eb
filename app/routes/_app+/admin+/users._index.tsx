import type { LoaderFunctionArgs } from "@remix-run/node";
import { Form, Link, useLoaderData } from "@remix-run/react";
import { adminActor, noPosts } from "~/routes/_app+/admin+/admin.server";
import { parseId } from "~/models/scope.server";
import { page } from "~/web/http.server";
import { searchUsers } from "~/models/admin-users.server";
import { DataTable } from "~/components/data-table";

/** Users: a search over e-mail and name (GET, so it works without JavaScript and can be bookmarked), newest first. */
export const loader = page(async ({ request, context }: LoaderFunctionArgs) => {
  const actor = await adminActor(request, context);
  const url = new URL(request.url);
  const q = (url.searchParams.get("q") ?? "").slice(0, 100);
  const { rows, next } = await searchUsers(actor, q, parseId(url.searchParams.get("before")) ?? undefined);
  return { q, rows, next };
});

/** Nothing to post here: 404 to a non-admin like every console page, 405 to an admin. */
export const action = noPosts;

export default function Users() {
  const { q, rows, next } = useLoaderData<typeof loader>();
  return (
    <section aria-labelledby="users-heading">
      <h2 id="users-heading">Users</h2>
      <Form method="get" role="search" aria-label="Users" className="inline-form">
        <label htmlFor="users-q">Search users</label>
        <input id="users-q" name="q" type="search" defaultValue={q} maxLength={100} />
        <button type="submit" className="btn">
          Search
        </button>
      </Form>
      {rows.length === 0 ? (
        <p>No users found</p>
      ) : (
        <DataTable columns={["Name", "Email", "Role", "Status"]} labelledBy="users-heading">
          {rows.map((u) => (
            <tr key={u.id}>
              <td>
                <Link to={`/admin/users/${u.id}`}>
                  {u.name} {u.surname}
                </Link>
              </td>
              <td>{u.email}</td>
              <td>{u.role}</td>
              <td>{u.status}</td>
            </tr>
          ))}
        </DataTable>
      )}
      {next ? <Link to={`/admin/users?${new URLSearchParams({ q, before: String(next) })}`}>Next page</Link> : null}
    </section>
  );
}
