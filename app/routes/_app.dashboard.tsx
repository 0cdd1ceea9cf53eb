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
  return {
    projects: projects.map((p) => ({ key: String(p.id), title: p.name, to: `/client/${p.id}` })),
    boards: boards.map((b) => ({ key: b.id, title: b.title, to: `/${b.project_id}/board/${b.id}` })),
  };
}

export default function Dashboard() {
  const { projects, boards } = useLoaderData<typeof loader>();
  return (
    <div className="dashboard">
      <h1>Dashboard</h1>
      <LinkSection id="projects" heading="Projects" empty="No projects were found" items={projects} />
      <LinkSection id="boards" heading="Boards" empty="No boards were found" items={boards} />
    </div>
  );
}

function LinkSection({ id, heading, empty, items }: { id: string; heading: string; empty: string; items: { key: string; title: string; to: string }[] }) {
  return (
    <section aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>{heading}</h2>
      {items.length === 0 ? (
        <p className="empty">{empty}</p>
      ) : (
        <ul className="card-list">
          {items.map((item) => (
            <li key={item.key}>
              <Link to={item.to} className="card-link">
                {item.title}
              </Link>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
