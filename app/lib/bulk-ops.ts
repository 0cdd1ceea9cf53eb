/**
 * Every bulk action of the grids' menu (spec 1, bulk actions menu), in the menu's order: its label there, its
 * confirmation page's title, whether it writes (editors only) and the one view it belongs to, if only one. The
 * menu, the pages and the server's check of the URL all read this table.
 */
export const BULK_OPS = {
  download: { label: "Download", title: "Download images" },
  move: { label: "Move", title: "Move to another board", write: true, only: "board" },
  add: { label: "Add", title: "Add to a board", write: true, only: "project" },
  copy: { label: "Copy", title: "Copy to another board", write: true, only: "board" },
  keywords: { label: "Add keyword", title: "Add keyword", write: true },
  remove: { label: "Remove", title: "Remove from this board", write: true, only: "board" },
  delete: { label: "Delete", title: "Delete images", write: true, only: "project" },
  attributes: { label: "Assign Attributes", title: "Assign Attributes", write: true },
  data: { label: "Download images data", title: "Download images data" },
  export: { label: "Export attributes by email", title: "Export attributes by email" },
} as const satisfies Record<string, BulkOpInfo>;

export type BulkOp = keyof typeof BULK_OPS;
export type BulkView = "project" | "board";
interface BulkOpInfo {
  label: string;
  title: string;
  write?: true;
  only?: BulkView;
}
/** The actions that change images or boards (each has a form the server checks); the others read. */
export type BulkWriteOp = { [K in BulkOp]: (typeof BULK_OPS)[K] extends { write: true } ? K : never }[BulkOp];

export const isBulkOp = (value: string): value is BulkOp => Object.hasOwn(BULK_OPS, value);

/** The actions a view offers to a person, in the menu's order; write actions only to those who may write. */
export function bulkOpsOf(view: BulkView, canEdit: boolean): BulkOp[] {
  return (Object.keys(BULK_OPS) as BulkOp[]).filter((op) => {
    const info: BulkOpInfo = BULK_OPS[op];
    return (!info.only || info.only === view) && (!info.write || canEdit);
  });
}

export interface BulkItem {
  /** The action's page: /…/bulk/<op>; "unselect" clears the selection. */
  op: BulkOp | "unselect";
  label: string;
}

/** The bulk menu of a view: its actions, then Unselect. */
export const bulkItems = (view: BulkView, canEdit: boolean): BulkItem[] => [
  ...bulkOpsOf(view, canEdit).map((op) => ({ op, label: BULK_OPS[op].label })),
  { op: "unselect", label: "Unselect" },
];

export const SHARED_BOARD_WARNING = "This is a client-level board: changes will be visible for all users.";

/**
 * Whether an action must be confirmed because it changes a client-level board, which every user of the project sees:
 * the board it adds to, copies to or moves to, and the board it starts from when it moves, removes or assigns there.
 * One rule, for the page that asks and for the server that checks.
 */
export function asksSharedConfirmation(op: BulkOp, boards: { source: boolean; target?: boolean }): boolean {
  switch (op) {
    case "add":
    case "copy":
      return boards.target === true;
    case "move":
      return boards.target === true || boards.source;
    case "remove":
    case "attributes":
      return boards.source;
    default:
      return false;
  }
}
