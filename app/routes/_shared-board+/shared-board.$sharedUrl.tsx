import type { HeadersFunction, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { useLoaderData, useNavigate } from "@remix-run/react";
import { ImageGrid } from "~/components/image-grid";
import { SearchSidebar } from "~/components/search-sidebar";
import { SharedErrorBoundary, SharedShell } from "~/components/shared-shell";
import { SKIP_TO_IMAGES, SKIP_TO_SIDEBAR } from "~/components/skip-links";
import { PAGE_SIZE } from "~/lib/grid";
import { apiParams, filterSearch, withFilterQuery } from "~/lib/grid-filter";
import { loadGrid } from "~/web/grid.server";
import { sidebarData } from "~/web/sidebar.server";
import { page } from "~/web/http.server";
import { MAX_DOWNLOAD } from "~/lib/schemas";
import { sharedLinks } from "~/lib/shared-media";
import { searchable, sharedScope, SHARED_HEADERS, withoutMetadata } from "~/routes/_shared-board+/shared-page.server";
import { recordOpen } from "~/services/share-views.server";
import { visitorMarks } from "~/models/share-reviews.server";
import { readVisitor } from "~/web/share-visitor.server";

export const meta: MetaFunction<typeof loader> = ({ data }) => [
  { title: `${data?.board.title ?? "Shared board"} | Koala` },
  { name: "robots", content: "noindex, nofollow" },
];

export const headers: HeadersFunction = () => SHARED_HEADERS;

/**
 * `/shared-board/:sharedUrl`: a board opened by a share link. Read-only and public, it needs no JavaScript at all:
 * a server-rendered, keyset-paged grid with the count, each image's own page (metadata as the link allows,
 * download and review), and a ZIP of the images when the link allows downloads. With JavaScript the grid is the
 * virtual one, fed by the link's own JSON endpoint. No session, no signed-in chrome, nothing else of the team's.
 */
export const loader = page(async ({ request, params, context }: LoaderFunctionArgs) => {
  const scope = searchable(await sharedScope(params.sharedUrl, context), request);
  const url = new URL(request.url);
  const [grid, visitor, sidebar] = await Promise.all([
    loadGrid(request, scope),
    readVisitor(request, scope.link.id),
    scope.link.showMetadata ? sidebarData(request, scope) : null,
  ]);
  if (!url.searchParams.has("after") && !url.searchParams.has("before")) recordOpen(scope, context.clientIp ?? null);
  const marks = await visitorMarks(
    scope,
    visitor,
    grid.cards.map((c) => c.id),
  );
  return {
    sharedUrl: params.sharedUrl!,
    board: { title: scope.board.title },
    filter: scope.filter ?? {},
    sidebar,
    link: { allowDownload: scope.link.allowDownload, showMetadata: scope.link.showMetadata },
    grid: { ...grid, cards: grid.cards.map((c) => withoutMetadata(c, scope.link.showMetadata)) },
    visitor: visitor ? { name: visitor.name } : null,
    marks: Object.fromEntries([...marks].map(([id, r]) => [id, r.mark])),
    maxDownload: MAX_DOWNLOAD,
  };
});

export default function SharedBoard() {
  const { sharedUrl, board, link, grid, visitor, marks, maxDownload, filter, sidebar } = useLoaderData<typeof loader>();
  const navigate = useNavigate();
  const base = `/shared-board/${sharedUrl}`;
  const links = sharedLinks(sharedUrl);
  const reviewed = Object.values(marks).filter(Boolean).length;
  return (
    <SharedShell title={board.title} skipLinks={sidebar ? [SKIP_TO_IMAGES, SKIP_TO_SIDEBAR] : [SKIP_TO_IMAGES]}>
      <p className="muted">
        Shared with you to view{link.allowDownload ? " and download" : ""}. Open an image to approve or reject it, or to leave a comment.
      </p>
      {visitor ? (
        <p className="muted" role="status">
          Reviewing as {visitor.name}
          {reviewed ? ` · ${reviewed} marked on this page` : ""}
        </p>
      ) : null}
      {link.allowDownload && grid.total > 0 ? (
        <form method="post" action={withFilterQuery(`${base}/zip`, filter)} className="shared-download">
          {grid.total <= maxDownload ? (
            <input type="hidden" name="all" value="1" />
          ) : (
            grid.cards.map((c) => <input key={c.id} type="hidden" name="ids" value={c.id} />)
          )}
          <button type="submit" className="btn">
            {grid.total <= maxDownload
              ? `Download all ${grid.total} images (ZIP)`
              : `Download the ${grid.cards.length} images of this page (ZIP)`}
          </button>
        </form>
      ) : null}
      <div className={sidebar ? "with-sidebar" : undefined}>
        {sidebar ? <SearchSidebar path={base} {...sidebar} /> : null}
        <ImageGrid
          key={filterSearch(filter)}
          data={grid}
          basePath={withFilterQuery(base, filter)}
          pageSize={PAGE_SIZE}
          scopeQuery=""
          pagesUrl={`/shared/board/get?${apiParams(`sharedUrl=${encodeURIComponent(sharedUrl)}`, filter)}`}
          links={links}
          onOpen={(id) => navigate(links.view(id))}
          marks={marks}
        />
      </div>
    </SharedShell>
  );
}

export const ErrorBoundary = SharedErrorBoundary;
