import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { useLoaderData } from "@remix-run/react";
import { ProjectCard } from "~/components/cards";
import { listProjects } from "~/models/projects.server";
import { requireActor } from "~/sessions.server";

export const meta: MetaFunction = () => [{ title: "All Projects | Koala" }];

export async function loader({ request, context }: LoaderFunctionArgs) {
  return { projects: await listProjects(await requireActor(request, context)) };
}

export default function AllClients() {
  const { projects } = useLoaderData<typeof loader>();
  return (
    <div>
      <h1>All projects</h1>
      {projects.length === 0 ? (
        <p className="empty">No clients found</p>
      ) : (
        <ul className="client-grid">
          {projects.map((p) => (
            <li key={p.id}>
              <ProjectCard id={p.id} name={p.name} logoKey={p.logo_key} />
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
