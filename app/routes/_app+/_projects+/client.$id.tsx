import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { useLoaderData } from "@remix-run/react";
import { GeneralErrorBoundary } from "~/components/error-boundary";
import { SidebarGrid } from "~/components/sidebar-grid";
import { ImageModal, useImageModal } from "~/components/image-modal";
import { GRID_PAGE_HANDLE } from "~/components/skip-links";
import { bulkItems } from "~/lib/bulk-ops";
import { loadGrid, updateSelection } from "~/web/grid.server";
import { sidebarData } from "~/web/sidebar.server";
import { headerOf } from "~/web/header.server";
import { page } from "~/web/http.server";
import { projectScope, withFilter } from "~/models/scope.server";
import { withSmartTags } from "~/services/smart-search.server";
import { requireActor } from "~/sessions.server";

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: `${data?.project.name ?? "Project"} | Koala` }];

/** The project, narrowed by the URL's keyword search (`?q=`), smart search (`?smart=`, `?tags=`) and attribute values (`?f=`). */
async function scopeOf(request: Request, id: string | undefined) {
  return withSmartTags(withFilter(await projectScope(await requireActor(request), id), request));
}

export const handle = GRID_PAGE_HANDLE;

export const loader = page(async ({ request, params }: LoaderFunctionArgs) => {
  const scope = await scopeOf(request, params.id);
  const [grid, sidebar] = await Promise.all([loadGrid(request, scope), sidebarData(request, scope)]);
  return {
    project: { id: scope.project.id, name: scope.project.name },
    sidebar,
    can: scope.can,
    grid,
    header: headerOf(scope),
  };
});

export const action = page(async ({ request, params }: ActionFunctionArgs) => {
  return updateSelection(request, await scopeOf(request, params.id));
});

export default function ProjectGrid() {
  const { project, grid, can, sidebar } = useLoaderData<typeof loader>();
  const modal = useImageModal();
  const path = `/client/${project.id}`;
  return (
    <div>
      <h1>{project.name}</h1>
      <SidebarGrid
        path={path}
        sidebar={sidebar}
        scopeParam={`project=${project.id}`}
        data={grid}
        onOpen={modal.open}
        cardsIn={{ context: { kind: "project" }, canEdit: can.edit }}
        bulk={bulkItems("project", can.edit)}
      />
      <ImageModal state={modal} />
    </div>
  );
}

export const ErrorBoundary = GeneralErrorBoundary;
