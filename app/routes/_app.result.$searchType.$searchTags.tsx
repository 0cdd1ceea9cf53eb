import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link, useLoaderData } from "@remix-run/react";
import { GeneralErrorBoundary } from "~/components/error-boundary";
import { ImageGrid } from "~/components/image-grid";
import { ImageModal, useImageModal } from "~/components/image-modal";
import { PAGE_SIZE } from "~/lib/grid";
import { apiParams, withFilterQuery } from "~/lib/grid-filter";
import { loadGrid } from "~/lib/grid.server";
import { NotFoundError } from "~/lib/errors";
import { page } from "~/lib/http.server";
import { isSearchType, resultPath } from "~/lib/search-routes";
import { projectCounts } from "~/models/grid.server";
import { allProjectsScope, withFilter } from "~/models/scope.server";
import { requireActor } from "~/sessions.server";

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: `${data?.tags ?? "Search"} | Related Images | Koala` }];

/**
 * /result/:searchType/:searchTags (spec 1 and 2): the images of every project the person belongs to that match,
 * ranked (title and keywords first, then newest), with a project facet that leads into each project's grid with the
 * same search applied, where selection and the bulk actions work.
 */
export const loader = page(async ({ request, params }: LoaderFunctionArgs) => {
  const actor = await requireActor(request);
  if (!isSearchType(params.searchType)) throw new NotFoundError("Page not found");
  const scope = withFilter(await allProjectsScope(actor), new URLSearchParams({ q: params.searchTags ?? "" }));
  const [grid, projects] = await Promise.all([loadGrid(request, scope), projectCounts(scope)]);
  return { type: params.searchType, tags: scope.filter?.q ?? "", grid, projects };
});

export default function SearchResult() {
  const { type, tags, grid, projects } = useLoaderData<typeof loader>();
  const modal = useImageModal();
  const filter = { q: tags };
  return (
    <div className="search-result">
      <h1>Related Images</h1>
      <p className="muted">
        {grid.total} {grid.total === 1 ? "image" : "images"} matching <q>{tags}</q> in your projects.
      </p>
      {projects.length ? (
        <nav aria-label="Projects with results" className="review-filter">
          {projects.map((p) => (
            <Link key={p.id} to={withFilterQuery(`/client/${p.id}`, filter)}>
              {p.name} ({p.count})
            </Link>
          ))}
        </nav>
      ) : null}
      {grid.total === 0 ? (
        <p className="empty">
          No related images found: <q>{tags}</q>
        </p>
      ) : (
        <ImageGrid
          data={grid}
          basePath={resultPath(type, tags)}
          pageSize={PAGE_SIZE}
          scopeQuery={apiParams("everywhere=1", filter)}
          onOpen={modal.open}
        />
      )}
      <ImageModal state={modal} />
    </div>
  );
}

export const ErrorBoundary = GeneralErrorBoundary;
