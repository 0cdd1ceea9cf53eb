import type { BulkItem } from "~/components/image-grid";

/** The bulk menu of a view, in the spec's order; write actions only for those who may write. */
export function bulkItems(view: "project" | "board", canEdit: boolean): BulkItem[] {
  const items: (BulkItem & { write?: boolean; only?: "project" | "board" })[] = [
    { op: "download", label: "Download" },
    { op: "move", label: "Move", write: true, only: "board" },
    { op: "add", label: "Add", write: true, only: "project" },
    { op: "copy", label: "Copy", write: true, only: "board" },
    { op: "keywords", label: "Add keyword", write: true },
    { op: "remove", label: "Remove", write: true, only: "board" },
    { op: "delete", label: "Delete", write: true, only: "project" },
    { op: "attributes", label: "Assign Attributes", write: true },
    { op: "data", label: "Download images data" },
    { op: "export", label: "Export attributes by email" },
    { op: "unselect", label: "Unselect" },
  ];
  return items.filter((i) => (!i.only || i.only === view) && (!i.write || canEdit)).map(({ op, label }) => ({ op, label }));
}
