import { describe, expect, it } from "vitest";
import { asksSharedConfirmation, BULK_OPS, bulkItems, bulkOpsOf, isBulkOp, type BulkOp } from "~/lib/bulk-ops";

describe("the bulk actions' table", () => {
  it("gives each view the spec's menu in order, write actions only to those who may write, and Unselect last", () => {
    expect(bulkItems("project", true).map((i) => i.label)).toEqual([
      "Download",
      "Add",
      "Add keyword",
      "Delete",
      "Assign Attributes",
      "Download images data",
      "Export attributes by email",
      "Unselect",
    ]);
    expect(bulkItems("board", true).map((i) => i.label)).toEqual([
      "Download",
      "Move",
      "Copy",
      "Add keyword",
      "Remove",
      "Assign Attributes",
      "Download images data",
      "Export attributes by email",
      "Unselect",
    ]);
    expect(bulkOpsOf("project", false)).toEqual(["download", "data", "export"]);
    expect(bulkOpsOf("board", false)).toEqual(["download", "data", "export"]);
  });

  it("knows only its own ops, not an inherited property's name", () => {
    expect(isBulkOp("move")).toBe(true);
    expect(isBulkOp("unselect")).toBe(false);
    expect(isBulkOp("constructor")).toBe(false);
    expect(isBulkOp("toString")).toBe(false);
  });

  it("asks for the client-level board's confirmation where that board changes: the target of Add, Copy and Move, the source of Move, Remove and Assign", () => {
    const asks = (op: BulkOp, source: boolean, target?: boolean) => asksSharedConfirmation(op, { source, target });
    expect([asks("add", false, true), asks("copy", false, true), asks("move", false, true)]).toEqual([true, true, true]);
    expect([asks("add", false, false), asks("copy", true, false), asks("move", false, false)]).toEqual([false, false, false]);
    expect([asks("move", true, false), asks("remove", true), asks("attributes", true)]).toEqual([true, true, true]);
    expect([asks("remove", false), asks("attributes", false), asks("keywords", true), asks("download", true)]).toEqual([
      false,
      false,
      false,
      false,
    ]);
  });

  it("titles every confirmation page", () => {
    for (const op of Object.keys(BULK_OPS) as BulkOp[]) expect(BULK_OPS[op].title.length).toBeGreaterThan(3);
  });
});
