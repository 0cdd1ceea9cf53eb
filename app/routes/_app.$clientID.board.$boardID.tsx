import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link, useLoaderData } from "@remix-run/react";
import { GeneralErrorBoundary } from "~/components/error-boundary";
import { ImageGrid } from "~/components/image-grid";
import { ImageModal, useImageModal } from "~/components/image-modal";
import { bulkItems } from "~/lib/bulk-menu";
import { PAGE_SIZE } from "~/lib/grid";
import { loadGrid, updateSelection } from "~/lib/grid.server";
import { headerOf } from "~/lib/header.server";
import { page } from "~/lib/http.server";
import { REVIEW_FILTERS, type ReviewFilter } from "~/lib/schemas";
import { boardScope, withReviewFilter } from "~/models/scope.server";
import { reviewCounts } from "~/models/shares.server";
import { requireActor } from "~/sessions.server";

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: `${data?.board.title ?? "Board"} | Koala` }];

/** The board, narrowed by the review filter in `?review=` (approved, rejected, commented) when there is one. */
async function scopeOf(request: Request, params: { boardID?: string; clientID?: string }) {
  return withReviewFilter(await boardScope(await requireActor(request), params.boardID, params.clientID), request);
}

export const loader = page(async ({ request, params }: LoaderFunctionArgs) => {
  const scope = await scopeOf(request, params);
  const [grid, counts] = await Promise.all([loadGrid(request, scope), reviewCounts([scope.board.id])]);
  return {
    board: { id: scope.board.id, title: scope.board.title, projectId: scope.project.id },
    can: scope.can,
    grid,
    review: scope.review ?? null,
    reviews: counts.get(scope.board.id) ?? null,
    header: headerOf(scope),
  };
});

export const action = page(async ({ request, params }: ActionFunctionArgs) => updateSelection(request, await scopeOf(request, params)));

const FILTER_LABELS: Record<ReviewFilter, string> = { approved: "Approved", rejected: "Rejected", commented: "Commented" };

export default function BoardGrid() {
  const { board, grid, can, review, reviews } = useLoaderData<typeof loader>();
  const modal = useImageModal(board.id);
  const path = `/${board.projectId}/board/${board.id}`;
  const filtered = review ? `${path}?review=${review}` : path;
  const count = (f: ReviewFilter) => (f === "commented" ? reviews?.comments : reviews?.[f]) ?? 0;
  return (
    <div>
      <h1>{board.title}</h1>
      {reviews || review ? (
        // The client review loop: what visitors of the board's share links approved, rejected or commented on.
        <nav aria-label="Client reviews" className="review-filter">
          <Link to={path} aria-current={review ? undefined : "page"}>
            All images
          </Link>
          {REVIEW_FILTERS.map((f) => (
            <Link key={f} to={`${path}?review=${f}`} aria-current={review === f ? "page" : undefined}>
              {FILTER_LABELS[f]} ({count(f)})
            </Link>
          ))}
        </nav>
      ) : null}
      <ImageGrid
        key={review ?? "all"}
        data={grid}
        basePath={filtered}
        pageSize={PAGE_SIZE}
        scopeQuery={`board=${encodeURIComponent(board.id)}${review ? `&review=${review}` : ""}`}
        onOpen={modal.open}
        cardsIn={{ context: { kind: "board", boardId: board.id, path }, canEdit: can.edit }}
        bulk={bulkItems("board", can.edit)}
      />
      <ImageModal state={modal} />
    </div>
  );
}

export const ErrorBoundary = GeneralErrorBoundary;
