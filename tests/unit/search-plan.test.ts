import { describe, expect, it } from "vitest";
import { permissionsOf, withFilter, type GridScope } from "~/models/scope.server";
import { decodeCursor, encodeCursor, searchPlan } from "~/models/search-plan.server";

/**
 * The search plan of each kind of scope and filter: which rows drive the grid's statement and how they sort. Pure:
 * no database (the integration tests check the pages these plans give, and the database's plans for them).
 */
const actor = { id: 1, role: "user" as const };
const project = { id: 7, name: "P", logoKey: null, wsc: false, wscSource: null, keepGps: false, version: 1 };
const board = { id: "b1", title: "B", coverImageId: null, clientBoard: false, version: 1 };
const scopes = {
  project: { kind: "project", actor, project, role: "editor", can: permissionsOf("editor") },
  board: { kind: "board", actor, project, board, role: "editor", can: permissionsOf("editor") },
  shared: (allowDownload: boolean) => ({
    kind: "shared" as const,
    link: { id: 3, allowDownload, showMetadata: true },
    project,
    board,
    can: { edit: false, manage: false, download: allowDownload, select: false },
  }),
  all: { kind: "all", actor, version: 1, can: { edit: false, manage: false, download: true, select: false } },
} satisfies Record<string, GridScope | ((allowDownload: boolean) => GridScope)>;
const filtered = (scope: GridScope, params: Record<string, string> = {}) => searchPlan(withFilter(scope, new URLSearchParams(params)));

const byTime = { time: "images.created_at", id: "images.id" } as const;
const byAdding = { time: "board_images.added_at", id: "board_images.image_id" } as const;

describe("search plan", () => {
  it("drives a grid without a search by the scope's own keyset index, newest first, unranked", () => {
    expect(filtered(scopes.project)).toEqual({
      driver: { kind: "keyset", over: "images" },
      sortKey: { rank: null, ...byTime },
      keywords: null,
      tags: null,
      empty: false,
      walkable: false,
    });
    expect(filtered(scopes.board)).toMatchObject({
      driver: { kind: "keyset", over: "board_images" },
      sortKey: { rank: null, ...byAdding },
    });
    // Text without a word filters nothing in a project, and finds nothing across projects.
    expect(filtered(scopes.project, { q: "* -" })).toMatchObject({
      driver: { kind: "keyset", over: "images" },
      keywords: null,
      empty: false,
    });
    expect(filtered(scopes.all, { q: "* -" })).toMatchObject({ empty: true });
    // Attribute values and a board's review filter narrow the rows; they drive nothing and rank nothing.
    expect(filtered(scopes.board, { f: "3:North", review: "commented" })).toMatchObject({
      driver: { kind: "keyset", over: "board_images" },
      sortKey: { rank: null },
    });
  });

  it("drives a project's keyword search by its matches, ranked by the title-or-keywords tier, and lets common words walk", () => {
    expect(filtered(scopes.project, { q: "petrol pu" })).toEqual({
      driver: { kind: "keywords" },
      sortKey: { rank: "strong", ...byTime },
      keywords: {
        terms: [
          { tokens: ["petrol"], prefix: false },
          { tokens: ["pu"], prefix: true },
        ],
        in: "anywhere",
      },
      tags: null,
      empty: false,
      walkable: true,
    });
    // Across projects the matches drive too; only a project's pages walk.
    expect(filtered(scopes.all, { q: "petrol" })).toMatchObject({ driver: { kind: "keywords" }, empty: false, walkable: false });
  });

  it("drives a smart search by its tags' matches, ranked by the tags held (then the keyword tier with a keyword search)", () => {
    expect(filtered(scopes.project, { smart: "fizzy drinks", tags: "soda,grocery aisle" })).toEqual({
      driver: { kind: "tags" },
      sortKey: { rank: "tags", ...byTime },
      keywords: null,
      tags: [
        { tokens: ["soda"], prefix: false },
        { tokens: ["grocery", "aisle"], prefix: false },
      ],
      empty: false,
      walkable: false,
    });
    expect(filtered(scopes.project, { q: "cola", smart: "x", tags: "soda" })).toMatchObject({
      driver: { kind: "keywords" },
      sortKey: { rank: "tags+strong" },
      walkable: false,
    });
    // Every tag removed (or none found): nothing, rather than everything.
    expect(filtered(scopes.project, { smart: "fizzy", tags: "" })).toMatchObject({ empty: true, tags: null, walkable: false });
    expect(filtered(scopes.project, { q: "cola", smart: "fizzy", tags: "" })).toMatchObject({ empty: true });
  });

  it("keeps a board's search on the board (the smaller side), and a link without downloads away from file names", () => {
    expect(filtered(scopes.board, { q: "cola" })).toMatchObject({
      driver: { kind: "keyset", over: "board_images" },
      sortKey: { rank: "strong", ...byAdding },
      keywords: { in: "anywhere" },
      walkable: false,
    });
    expect(filtered(scopes.board, { q: "cola", smart: "x", tags: "soda" })).toMatchObject({
      driver: { kind: "keyset", over: "board_images" },
      sortKey: { rank: "tags+strong", ...byAdding },
    });
    expect(filtered(scopes.shared(true), { q: "cola" }).keywords?.in).toBe("anywhere");
    expect(filtered(scopes.shared(false), { q: "cola" }).keywords?.in).toBe("noFileName");
    // A shared board offers no smart search: its tags are dropped with the filter.
    expect(filtered(scopes.shared(true), { smart: "x", tags: "soda" })).toMatchObject({
      tags: null,
      empty: false,
      sortKey: { rank: null },
    });
  });
});

describe("grid cursor", () => {
  it("encodes the composite keyset position (rank, time, id) and reads it back", () => {
    for (const c of [
      { rank: 0, t: 1_700_000_000_000, id: 1 },
      { rank: 1, t: 1_700_000_000_000, id: 42 },
      { rank: 33, t: 0, id: 2_147_483_647 },
    ])
      expect(decodeCursor(encodeCursor(c))).toEqual(c);
    // Without a rank, the cursor a grid has always had.
    expect(encodeCursor({ rank: 0, t: 1_700_000_000_000, id: 5 })).toBe(Buffer.from("1700000000000.5").toString("base64url"));
    expect(encodeCursor({ rank: 2, t: 1_700_000_000_000, id: 5 })).toBe(Buffer.from("2:1700000000000.5").toString("base64url"));
  });

  it("reads anything else as no cursor", () => {
    const b64 = (text: string) => Buffer.from(text).toString("base64url");
    for (const bad of [
      b64("1.2.3"),
      b64("1:2:3.4"),
      b64("100:1700000000000.5"), // a rank past two digits
      b64(":1700000000000.5"),
      b64("-1:1700000000000.5"),
      b64("1:1700000000000.3000000000"), // an id past 32 bits
      b64("1: 1700000000000.5"),
      b64("1:1700000000000.0"),
      `${b64("1:1700000000000.5")}${"A".repeat(60)}`,
      null,
      undefined,
      "",
    ])
      expect(decodeCursor(bad), String(bad)).toBeNull();
  });
});
