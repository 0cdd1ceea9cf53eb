import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { NavLink, Outlet } from "@remix-run/react";
import { GeneralErrorBoundary } from "~/components/error-boundary";
import { adminActor, noPosts } from "~/routes/_app+/admin+/admin.server";
import { page } from "~/web/http.server";

export const meta: MetaFunction = () => [{ title: "Admin | Koala" }];

/** The admin console's frame: admins only (anyone else: 404), its sections as tabs of links. */
export const loader = page(async ({ request, context }: LoaderFunctionArgs) => {
  await adminActor(request, context);
  return null;
});

/** Nothing to post here: 404 to a non-admin like every console page, 405 to an admin. */
export const action = noPosts;

export default function Admin() {
  return (
    <div className="settings-page admin-page">
      <h1>Admin</h1>
      <nav aria-label="Admin" className="admin-nav">
        <ul>
          <li>
            <NavLink to="/admin" end>
              Registrations
            </NavLink>
          </li>
          <li>
            <NavLink to="/admin/users">Users</NavLink>
          </li>
          <li>
            <NavLink to="/admin/projects">Projects</NavLink>
          </li>
          <li>
            <NavLink to="/admin/sign-in">Company sign-in</NavLink>
          </li>
          <li>
            <NavLink to="/admin/tokens">Access tokens</NavLink>
          </li>
          <li>
            <NavLink to="/admin/audit">Audit log</NavLink>
          </li>
        </ul>
      </nav>
      <Outlet />
    </div>
  );
}

export const ErrorBoundary = GeneralErrorBoundary;
