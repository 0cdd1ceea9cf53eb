import type { ReactNode, TableHTMLAttributes } from "react";

/** A list as a table (the admin console's lists, the profile's sessions): column headers, then the rows given. */
export function DataTable({
  columns,
  children,
  ...rest
}: { columns: string[]; children: ReactNode } & TableHTMLAttributes<HTMLTableElement>) {
  return (
    <table className="data-table" {...rest}>
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
  );
}
