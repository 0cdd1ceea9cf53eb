import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link, useLoaderData } from "@remix-run/react";
import { GeneralErrorBoundary } from "~/components/error-boundary";
import { SidebarGrid } from "~/components/sidebar-grid";
import { ImageModal, useImageModal } from "~/components/image-modal";
import { GRID_PAGE_HANDLE } from "~/components/skip-links";
import { bulkItems } from "~/lib/bulk-ops";
import { loadGrid, updateSelection } from "~/web/grid.server";
import { sidebarData } from "~/web/sidebar.server";
import { headerOf } from "~/web/header.server";
import { page } from "~/web/http.server";
import { projectScopeOf } from "~/web/scopes.server";

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: `${data?.project.name ?? "Project"} | Koala` }];

export const handle = GRID_PAGE_HANDLE;

/** The project, narrowed by the URL's keyword search (`?q=`), smart search (`?smart=`, `?tags=`) and attribute values (`?f=`). */
export const loader = page(async ({ request, params, context }: LoaderFunctionArgs) => {
  const scope = await projectScopeOf({ request, context }, params.id, { filtered: true });
  const [grid, sidebar] = await Promise.all([loadGrid(request, scope), sidebarData(request, scope)]);
  return {
    project: { id: scope.project.id, name: scope.project.name },
    sidebar,
    can: scope.can,
    grid,
    header: headerOf(scope),
  };
});

export const action = page(async ({ request, params, context }: ActionFunctionArgs) => {
  return updateSelection(request, await projectScopeOf({ request, context }, params.id, { filtered: true }));
});

export default function ProjectGrid() {
  const { project, grid, can, sidebar } = useLoaderData<typeof loader>();
  const modal = useImageModal();
  const path = `/client/${project.id}`;
  return (
    <div>
      <div className="page-title-row">
        <h1>{project.name}</h1>
        <Link to={`${path}/duplicates`}>Possible duplicates</Link>
      </div>
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
