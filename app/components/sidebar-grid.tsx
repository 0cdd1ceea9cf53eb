import type { ComponentProps } from "react";
import { PAGE_SIZE } from "~/lib/grid";
import { apiParams, filterSearch, withFilterQuery } from "~/lib/grid-filter";
import { ImageGrid } from "./image-grid";
import { SearchSidebar } from "./search-sidebar";

type GridProps = ComponentProps<typeof ImageGrid>;

/**
 * A project's or a board's images beside their search sidebar: the grid follows the sidebar's filter (its address,
 * its pages and a fresh grid when the filter changes).
 */
export function SidebarGrid({
  path,
  sidebar,
  scopeParam,
  ...grid
}: {
  /** The grid's path without its query. */
  path: string;
  sidebar: Omit<ComponentProps<typeof SearchSidebar>, "path"> & { filtersVersion: string | null };
  /** The scope in /api/grid's terms: `project=1`, `board=abc`. */
  scopeParam: string;
} & Pick<GridProps, "data" | "onOpen" | "cardsIn" | "bulk">) {
  const { filtersVersion, ...search } = sidebar;
  return (
    <div className="with-sidebar">
      <SearchSidebar path={path} {...search} />
      <ImageGrid
        key={filterSearch(sidebar.filter)}
        filtersVersion={filtersVersion}
        basePath={withFilterQuery(path, sidebar.filter)}
        pageSize={PAGE_SIZE}
        scopeQuery={apiParams(scopeParam, sidebar.filter)}
        {...grid}
      />
    </div>
  );
}
