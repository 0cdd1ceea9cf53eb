import type { ReactNode, TableHTMLAttributes } from "react";

/**
 * A list as a table (the admin console's lists, the profile's sessions): column headers, then the rows given, named
 * by the heading `labelledBy` points at. A table wider than the window (a phone) scrolls sideways in a region of its
 * own instead of widening the page; the region takes focus, so a keyboard can scroll it too.
 */
export function DataTable({
  columns,
  labelledBy,
  children,
  ...rest
}: { columns: string[]; labelledBy: string; children: ReactNode } & TableHTMLAttributes<HTMLTableElement>) {
  return (
    // eslint-disable-next-line jsx-a11y/no-noninteractive-tabindex -- a region that scrolls must take focus to be scrolled by keyboard
    <div className="table-scroll" role="region" aria-labelledby={labelledBy} tabIndex={0}>
      <table className="data-table" aria-labelledby={labelledBy} {...rest}>
        <thead>
          <tr>
            {columns.map((c) => (
              <th scope="col" key={c}>
                {c}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}
