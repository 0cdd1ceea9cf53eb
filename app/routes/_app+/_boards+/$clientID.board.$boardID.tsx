import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link, useLoaderData } from "@remix-run/react";
import { GeneralErrorBoundary } from "~/components/error-boundary";
import { SidebarGrid } from "~/components/sidebar-grid";
import { ImageModal, useImageModal } from "~/components/image-modal";
import { GRID_PAGE_HANDLE } from "~/components/skip-links";
import { bulkItems } from "~/lib/bulk-ops";
import { withFilterQuery } from "~/lib/grid-filter";
import { loadGrid, updateSelection } from "~/web/grid.server";
import { sidebarData } from "~/web/sidebar.server";
import { headerOf } from "~/web/header.server";
import { page } from "~/web/http.server";
import { REVIEW_FILTERS, type ReviewFilter } from "~/lib/grid-filter";
import { reviewCounts } from "~/models/share-reviews.server";
import { boardScopeOf } from "~/web/scopes.server";

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: `${data?.board.title ?? "Board"} | Koala` }];

export const handle = GRID_PAGE_HANDLE;

/** The board, narrowed by the URL's keyword search (`?q=`) and review filter (`?review=`: approved, rejected, commented). */
export const loader = page(async ({ request, params, context }: LoaderFunctionArgs) => {
  const scope = await boardScopeOf({ request, context }, params, { filtered: true });
  const [grid, counts, sidebar] = await Promise.all([
    loadGrid(request, scope),
    reviewCounts([scope.board.id]),
    sidebarData(request, scope),
  ]);
  return {
    board: { id: scope.board.id, title: scope.board.title, projectId: scope.project.id },
    can: scope.can,
    grid,
    sidebar,
    reviews: counts.get(scope.board.id) ?? null,
    header: headerOf(scope),
  };
});

export const action = page(async ({ request, params, context }: ActionFunctionArgs) =>
  updateSelection(request, await boardScopeOf({ request, context }, params, { filtered: true })),
);

const FILTER_LABELS: Record<ReviewFilter, string> = { approved: "Approved", rejected: "Rejected", commented: "Commented" };

export default function BoardGrid() {
  const { board, grid, can, reviews, sidebar } = useLoaderData<typeof loader>();
  const filter = sidebar.filter;
  const modal = useImageModal(board.id);
  const path = `/${board.projectId}/board/${board.id}`;
  const review = filter.review;
  const search = { ...filter, review: undefined };
  const count = (f: ReviewFilter) => (f === "commented" ? reviews?.comments : reviews?.[f]) ?? 0;
  return (
    <div>
      <h1>{board.title}</h1>
      {reviews || review ? (
        // The client review loop: what visitors of the board's share links approved, rejected or commented on.
        <nav aria-label="Client reviews" className="review-filter">
          <Link to={withFilterQuery(path, search)} aria-current={review ? undefined : "page"}>
            All images
          </Link>
          {REVIEW_FILTERS.map((f) => (
            <Link key={f} to={withFilterQuery(path, { ...search, review: f })} aria-current={review === f ? "page" : undefined}>
              {FILTER_LABELS[f]} ({count(f)})
            </Link>
          ))}
        </nav>
      ) : null}
      <SidebarGrid
        path={path}
        sidebar={sidebar}
        scopeParam={`board=${encodeURIComponent(board.id)}`}
        data={grid}
        onOpen={modal.open}
        cardsIn={{ context: { kind: "board", boardId: board.id, path }, canEdit: can.edit }}
        bulk={bulkItems("board", can.edit)}
      />
      <ImageModal state={modal} />
    </div>
  );
}

export const ErrorBoundary = GeneralErrorBoundary;
