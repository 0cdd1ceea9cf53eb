import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { useLoaderData } from "@remix-run/react";
import { GeneralErrorBoundary } from "~/components/error-boundary";
import { ImageGrid } from "~/components/image-grid";
import { ImageModal, useImageModal } from "~/components/image-modal";
import { bulkItems } from "~/lib/bulk-menu";
import { PAGE_SIZE } from "~/lib/grid";
import { loadGrid, updateSelection } from "~/lib/grid.server";
import { headerOf } from "~/lib/header.server";
import { page } from "~/lib/http.server";
import { projectScope } from "~/models/scope.server";
import { requireActor } from "~/sessions.server";

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: `${data?.project.name ?? "Project"} | Koala` }];

export const loader = page(async ({ request, params }: LoaderFunctionArgs) => {
  const scope = await projectScope(await requireActor(request), params.id);
  const grid = await loadGrid(request, scope);
  return {
    project: { id: scope.project.id, name: scope.project.name },
    can: scope.can,
    grid,
    header: headerOf(scope),
  };
});

export const action = page(async ({ request, params }: ActionFunctionArgs) => {
  const scope = await projectScope(await requireActor(request), params.id);
  return updateSelection(request, scope);
});

export default function ProjectGrid() {
  const { project, grid, can } = useLoaderData<typeof loader>();
  const modal = useImageModal();
  return (
    <div>
      <h1>{project.name}</h1>
      <ImageGrid
        data={grid}
        basePath={`/client/${project.id}`}
        pageSize={PAGE_SIZE}
        scopeQuery={`project=${project.id}`}
        onOpen={modal.open}
        cardsIn={{ context: { kind: "project" }, canEdit: can.edit }}
        bulk={bulkItems("project", can.edit)}
      />
      <ImageModal state={modal} />
    </div>
  );
}

export const ErrorBoundary = GeneralErrorBoundary;
