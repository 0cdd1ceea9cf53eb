import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link, useLoaderData } from "@remix-run/react";
import { listBoards } from "~/models/boards.server";
import { listProjects } from "~/models/projects.server";
import { requireActor } from "~/sessions.server";

export const meta: MetaFunction = () => [{ title: "Dashboard | Koala" }];

/** A first dashboard: the member's projects and boards. The browsing work replaces it with the full one. */
export async function loader({ request }: LoaderFunctionArgs) {
  const actor = await requireActor(request);
  const [projects, boards] = await Promise.all([listProjects(actor), listBoards(actor, { limit: 12 })]);
  return { projects, boards };
}

export default function Dashboard() {
  const { projects, boards } = useLoaderData<typeof loader>();
  return (
    <div className="dashboard">
      <h1>Dashboard</h1>
      <section aria-labelledby="projects-title">
        <h2 id="projects-title">Projects</h2>
        {projects.length === 0 ? (
          <p className="empty">No projects were found</p>
        ) : (
          <ul className="card-list">
            {projects.map((p) => (
              <li key={p.id}>
                <Link to={`/client/${p.id}`} className="card-link">
                  {p.name}
                </Link>
              </li>
            ))}
          </ul>
        )}
      </section>
      <section aria-labelledby="boards-title">
        <h2 id="boards-title">Boards</h2>
        {boards.length === 0 ? (
          <p className="empty">No boards were found</p>
        ) : (
          <ul className="card-list">
            {boards.map((b) => (
              <li key={b.id}>
                <Link to={`/${b.project_id}/board/${b.id}`} className="card-link">
                  {b.title}
                </Link>
              </li>
            ))}
          </ul>
        )}
      </section>
    </div>
  );
}
