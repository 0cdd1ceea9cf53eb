import path from "node:path";
import { describe, expect, it } from "vitest";
import { importCycles, importGraph, upwardImports, type Edge, type Layer } from "../helpers/import-graph";

/**
 * The whole import graph of app/, read from the source (tests/helpers/import-graph.ts), against the layers
 * docs/architecture.md draws: lib (leaves) → db → models → services → web → routes and components. Value imports
 * only; types vanish from the build. The lint rule catches a wrong import in one file; this catches what a file-level
 * rule cannot see: a circle through several files.
 */
const LAYERS: Layer[] = [
  { name: "lib", paths: ["app/lib", "app/config.server.ts"] },
  { name: "db", paths: ["app/db"] },
  { name: "models", paths: ["app/models"] },
  { name: "services", paths: ["app/services"] },
  { name: "web", paths: ["app/web", "app/sessions.server.ts"] },
  { name: "ui", paths: ["app/routes", "app/components", "app/root.tsx", "app/entry.server.tsx"] },
];
const root = path.resolve(__dirname, "../..");
const edges = importGraph(root, ["app", "server"]);

describe("the import graph", () => {
  it("is read whole: every layer has files and imports", () => {
    for (const layer of LAYERS)
      expect(
        edges.some((e) => layer.paths.some((p) => e.from.startsWith(p))),
        layer.name,
      ).toBe(true);
    expect(edges.length).toBeGreaterThan(500);
  });

  it("has no import circle", () => {
    expect(importCycles(edges)).toEqual([]);
  });

  it("has no import that runs back up a layer", () => {
    expect(upwardImports(edges, LAYERS)).toEqual([]);
  });

  it("has migrations that import no app code but the database layer's own (a migration is history: it must not change when live code does)", () => {
    const outside = edges.filter((e) => e.from.startsWith("app/db/migrations/") && !e.typeOnly && !e.to.startsWith("app/db/"));
    expect(outside.map((e) => `${e.from} → ${e.to}`)).toEqual([]);
  });

  it("has components that import no server module (they are sent to the browser)", () => {
    const server = edges.filter((e) => e.from.startsWith("app/components/") && !e.typeOnly && /\.server\.tsx?$/.test(e.to));
    expect(server.map((e) => `${e.from} → ${e.to}`)).toEqual([]);
  });

  it("has an HTTP front (server/) that imports no app module but types: it reaches the app through the build (decision 0020)", () => {
    const reach = edges.filter((e) => e.from.startsWith("server/") && e.to.startsWith("app/") && !e.typeOnly);
    expect(reach.map((e) => `${e.from} → ${e.to}`)).toEqual([]);
  });
});

describe("the checks themselves", () => {
  const edge = (from: string, to: string, typeOnly = false): Edge => ({ from, to, typeOnly });
  it("find a circle through three files, and not one made of type imports", () => {
    const circle = [
      edge("app/models/a.ts", "app/models/b.ts"),
      edge("app/models/b.ts", "app/models/c.ts"),
      edge("app/models/c.ts", "app/models/a.ts"),
    ];
    expect(importCycles(circle)).toEqual([["app/models/a.ts", "app/models/b.ts", "app/models/c.ts"]]);
    expect(importCycles([...circle.slice(0, 2), edge("app/models/c.ts", "app/models/a.ts", true)])).toEqual([]);
  });
  it("find a model importing a service, and not a service importing a model", () => {
    expect(upwardImports([edge("app/models/a.ts", "app/services/b.ts")], LAYERS)).toEqual([
      "app/models/a.ts (models) → app/services/b.ts (services)",
    ]);
    expect(upwardImports([edge("app/services/b.ts", "app/models/a.ts")], LAYERS)).toEqual([]);
  });
});
