import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link, useLoaderData } from "@remix-run/react";
import { GeneralErrorBoundary } from "~/components/error-boundary";
import { ImageGrid } from "~/components/image-grid";
import { ImageModal, useImageModal } from "~/components/image-modal";
import { SmartPanel } from "~/components/smart-search";
import { KoalaIllustration } from "~/components/koala-illustration";
import { PAGE_SIZE } from "~/lib/grid";
import { apiParams, filterSearch, withFilterQuery } from "~/lib/grid-filter";
import { loadGrid } from "~/web/grid.server";
import { NotFoundError } from "~/lib/errors";
import { page } from "~/web/http.server";
import { isSearchType, resultPath } from "~/lib/search-routes";
import { projectCounts } from "~/models/grid.server";
import { allProjectsScope, withFilter } from "~/models/scope.server";
import { smartPanel, withSmartTags } from "~/services/smart-search.server";
import { requireActor } from "~/sessions.server";

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: `${data?.words ?? "Search"} | Related Images | Koala` }];

/**
 * /result/:searchType/:searchTags (spec 1 and 2): the images of every project the person belongs to that match,
 * with a project facet that leads into each project's grid with the same search applied, where selection and the
 * bulk actions work. Keyword: ranked title and keywords first, then newest. Smart: the phrase's tags (`?tags=` once
 * edited) across the projects' vocabulary, most tags held first, with the description as the koala's speech.
 */
export const loader = page(async ({ request, params, context }: LoaderFunctionArgs) => {
  const actor = await requireActor(request, context);
  if (!isSearchType(params.searchType)) throw new NotFoundError("Page not found");
  const type = params.searchType;
  const words = params.searchTags ?? "";
  const given = new URL(request.url).searchParams.get("tags");
  const from = new URLSearchParams(type === "keyword" ? { q: words } : { smart: words, ...(given === null ? {} : { tags: given }) });
  const scope = await withSmartTags(withFilter(await allProjectsScope(actor), from));
  const [grid, projects, smart] = await Promise.all([
    loadGrid(request, scope),
    projectCounts(scope),
    type === "smart" ? smartPanel(scope) : null,
  ]);
  return {
    type,
    words: type === "keyword" ? (scope.filter?.q ?? "") : (scope.filter?.smart ?? ""),
    filter: scope.filter ?? {},
    grid,
    projects,
    smart,
  };
});

export default function SearchResult() {
  const { type, words, filter, grid, projects, smart } = useLoaderData<typeof loader>();
  const modal = useImageModal();
  const path = resultPath(type, words);
  return (
    <div className="search-result">
      {/* The spec's illustration, and for a smart search its speech: what the phrase was understood as. */}
      <div className="smart-speech">
        <KoalaIllustration />
        {smart ? <SmartPanel path={path} filter={filter} panel={smart} clearable={false} /> : null}
      </div>
      <h1>Related Images</h1>
      <p className="muted">
        {grid.total} {grid.total === 1 ? "image" : "images"} {type === "smart" ? "for" : "matching"} <q>{words}</q> in your projects.
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
          No related images found: <q>{words}</q>
        </p>
      ) : (
        <>
          {/* The cards are h3 (under a grid's sidebar h2): the results get their h2 too, so no level is skipped. */}
          <h2 className="sr-only">Images</h2>
          <ImageGrid
            key={filterSearch(filter)}
            data={grid}
            basePath={withFilterQuery(path, { tags: filter.tags })}
            pageSize={PAGE_SIZE}
            scopeQuery={apiParams("everywhere=1", filter)}
            onOpen={modal.open}
          />
        </>
      )}
      <ImageModal state={modal} />
    </div>
  );
}

export const ErrorBoundary = GeneralErrorBoundary;
