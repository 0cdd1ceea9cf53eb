import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { useLoaderData } from "@remix-run/react";
import { ImageGrid } from "~/components/image-grid";
import { NotFoundBoundary } from "~/components/not-found";
import { ImageModal, useImageModal } from "~/components/image-modal";
import { PAGE_SIZE } from "~/lib/grid";
import { loadGrid, orNotFound, updateSelection } from "~/lib/grid.server";
import { canEditProject, getProject } from "~/models/projects.server";
import { requireActor } from "~/sessions.server";

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: `${data?.project.name ?? "Project"} | Koala` }];

export async function loader({ request, params }: LoaderFunctionArgs) {
  const actor = await requireActor(request);
  const projectId = Number(params.id);
  const project = await orNotFound(() => getProject(actor, projectId));
  const [grid, canEdit] = await Promise.all([loadGrid(request, actor, { kind: "project", projectId: project.id }), canEditProject(actor, project.id)]);
  return {
    project: { id: project.id, name: project.name },
    canEdit,
    grid,
    header: { title: project.name, projectId: project.id, projectName: project.name, kind: "project" as const },
  };
}

export async function action({ request, params }: ActionFunctionArgs) {
  const actor = await requireActor(request);
  return updateSelection(request, actor, { kind: "project", projectId: Number(params.id) });
}

export default function ProjectGrid() {
  const { project, grid, canEdit } = useLoaderData<typeof loader>();
  const modal = useImageModal();
  return (
    <div>
      <h1>{project.name}</h1>
      <ImageGrid data={grid} basePath={`/client/${project.id}`} pageSize={PAGE_SIZE} scopeQuery={`project=${project.id}`} onOpen={modal.open} deletable={canEdit} />
      <ImageModal state={modal} />
    </div>
  );
}

export const ErrorBoundary = NotFoundBoundary;
