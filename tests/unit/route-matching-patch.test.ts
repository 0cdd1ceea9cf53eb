import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { AgnosticRouteObject } from "@remix-run/router";
import * as esmBuild from "../../node_modules/@remix-run/router/dist/router.js";
import { describe, expect, it } from "vitest";

/**
 * patches/@remix-run+router+1.23.3.patch (docs/decisions/0024): the CommonJS build Remix's server runtime loads
 * keeps each routes array's ranked branches, its last matched paths and each compiled path pattern instead of redoing
 * them on every match.
 * Its answers must stay those of the unpatched router (the ES module build, which the patch leaves alone).
 */
type Router = typeof import("@remix-run/router");
const esm = esmBuild as unknown as Router;
const require = createRequire(import.meta.url);
const cjsFile = require.resolve("@remix-run/router");
const cjs = require("@remix-run/router") as Router;

const tree = (): AgnosticRouteObject[] => [
  {
    id: "root",
    path: "",
    children: [
      { id: "index", index: true },
      { id: "login", path: "login" },
      { id: "splat", path: "*" },
      {
        id: "app",
        children: [
          { id: "dashboard", path: "dashboard" },
          { id: "client", path: "client/:id" },
          { id: "client-new", path: "client/new" },
          { id: "client-edit", path: "client/:id/edit" },
          { id: "board", path: ":clientID/board/:boardID" },
          { id: "bulk", path: ":clientID/board/:boardID/bulk/:op" },
          {
            id: "admin",
            path: "admin",
            children: [
              { id: "admin-index", index: true },
              { id: "user", path: "users/:id" },
              { id: "more", path: "users/:id/*" },
            ],
          },
        ],
      },
      { id: "pending", path: "pending/:submitted?" },
      { id: "docs", path: "docs/:lang?/intro" },
      { id: "exact", path: "Exact", caseSensitive: true },
      { id: "word", path: ":word" },
      { id: "shared", path: "shared-board/:sharedUrl" },
      { id: "shared-image", path: "shared-board/:sharedUrl/image/:imageId" },
    ],
  },
];
const paths = [
  "/",
  "/login",
  "/login/",
  "/LOGIN",
  "/dashboard",
  "/client/7",
  "/client/new",
  "/client/7/edit",
  "/3/board/abc",
  "/3/board/abc/bulk/add",
  "/admin",
  "/admin/users/5",
  "/admin/users/5/x/y",
  "/pending",
  "/pending/yes",
  "/docs/intro",
  "/docs/fr/intro",
  "/Exact",
  "/exact",
  "/anything",
  "/a/b/c",
  "/shared-board/1:tok",
  "/shared-board/1:tok/image/9",
  "/client/%E2%9C%93",
  "/client/a%2Fb",
];
const summary = (matches: ReturnType<typeof esm.matchRoutes>) =>
  matches?.map((m) => ({ id: m.route.id, params: m.params, pathname: m.pathname, base: m.pathnameBase })) ?? null;

describe("the patched route matching of @remix-run/router", () => {
  it("is what the server loads: the CommonJS build carries the patch after npm install (postinstall: patch-package)", () => {
    const source = readFileSync(cjsFile, "utf8");
    expect(source).toContain("const rankedBranchesOf = new WeakMap();");
    expect(source).toContain("ranked.matched.set(key,");
    expect(source).toContain("const compiledPaths = new Map();");
    expect(readFileSync(require.resolve("@remix-run/router/dist/router.js"), "utf8")).not.toContain("rankedBranchesOf");
  });

  it("answers every path as the unpatched router does, on the first call, on repeated calls and on another array", () => {
    const kept = tree();
    for (let round = 0; round < 3; round++)
      for (const path of paths) {
        const expected = summary(esm.matchRoutes(tree(), path));
        expect(summary(cjs.matchRoutes(kept, path)), `${path}, round ${round + 1}`).toEqual(expected);
        expect(summary(cjs.matchRoutes(tree(), path)), `${path} on a new array`).toEqual(expected);
        expect(summary(cjs.matchRoutes(kept, path, "/base")), `${path} outside a basename`).toEqual(
          summary(esm.matchRoutes(tree(), path, "/base")),
        );
        expect(summary(cjs.matchRoutes(kept, `/base${path}`, "/base")), `${path} under a basename`).toEqual(
          summary(esm.matchRoutes(tree(), `/base${path}`, "/base")),
        );
      }
  });

  it("answers a path it keeps with copies: a caller that changes the matches it got changes nothing for the next", () => {
    const kept = tree();
    const expected = summary(esm.matchRoutes(tree(), "/client/7/edit"));
    // The first call matches and keeps; the second is answered from what was kept, and it is that answer changed here.
    for (const call of ["first", "kept"]) {
      const got = cjs.matchRoutes(kept, "/client/7/edit")!;
      expect(summary(got), call).toEqual(expected);
      (got[got.length - 1]!.params as Record<string, string>).id = "changed";
      got[got.length - 1]!.pathname = "/changed";
      got.pop();
    }
    const again = cjs.matchRoutes(kept, "/client/7/edit");
    expect(summary(again)).toEqual(expected);
    expect(again?.at(-1)?.params.id).toBe("7");
  });

  it("answers every path right after 2,500 others were matched (the kept ones let go), and a 4,000-character path twice", () => {
    const kept = tree();
    for (let i = 0; i < 2_500; i++) expect(cjs.matchRoutes(kept, `/client/${i}`)?.at(-1)?.params.id).toBe(String(i));
    for (const path of paths) expect(summary(cjs.matchRoutes(kept, path)), path).toEqual(summary(esm.matchRoutes(tree(), path)));
    const long = `/client/${"x".repeat(4_000)}`;
    for (let round = 0; round < 2; round++) expect(cjs.matchRoutes(kept, long)?.at(-1)?.params.id).toHaveLength(4_000);
  });

  it("matches a path pattern the same from its cached compilation: parameters, case and partial matches", () => {
    for (let round = 0; round < 2; round++) {
      expect(cjs.matchPath("/users/:id", "/users/42")).toEqual(esm.matchPath("/users/:id", "/users/42"));
      expect(cjs.matchPath({ path: "/Users", caseSensitive: true }, "/users")).toBeNull();
      expect(cjs.matchPath({ path: "/Users", caseSensitive: false }, "/users")).not.toBeNull();
      expect(cjs.matchPath({ path: "/a", end: false }, "/a/b")).toEqual(esm.matchPath({ path: "/a", end: false }, "/a/b"));
      expect(cjs.matchPath({ path: "/a", end: true }, "/a/b")).toBeNull();
    }
  });
});
