import type { ServerBuild } from "@remix-run/node";
import { matchRoutes, type AgnosticRouteObject } from "@remix-run/router";
import { describe, expect, it } from "vitest";
import { loggedPath, routeIds } from "../../server/observe";

/**
 * The HTTP front names each request by its Remix route id (/metrics, the access log) with a matcher made once per
 * build (server/observe.ts), not @remix-run/router's matchRoutes, which flattens and ranks the tree on every call.
 * Both must give the same route for every path: ranking (static over dynamic, index routes, splats, sibling order),
 * pathless layouts, optional segments, trailing slashes, escapes and case.
 */
type Manifest = ServerBuild["routes"];
const route = (id: string, parentId: string | undefined, path?: string, extra: { index?: boolean; caseSensitive?: boolean } = {}) => ({
  [id]: { id, parentId, path, ...extra, module: {} },
});
const manifest = {
  ...route("root", undefined, ""),
  ...route("routes/_index", "root", undefined, { index: true }),
  ...route("routes/login", "root", "login"),
  ...route("routes/$", "root", "*"),
  ...route("routes/_app+/_layout", "root"),
  ...route("routes/_app+/dashboard", "routes/_app+/_layout", "dashboard"),
  ...route("routes/_app+/client.$id", "routes/_app+/_layout", "client/:id"),
  ...route("routes/_app+/client.$id_.edit", "routes/_app+/_layout", "client/:id/edit"),
  ...route("routes/_app+/client.new", "routes/_app+/_layout", "client/new"),
  ...route("routes/_app+/$clientID.board.$boardID", "routes/_app+/_layout", ":clientID/board/:boardID"),
  ...route("routes/_app+/$clientID.board.$boardID_.bulk.$op", "routes/_app+/_layout", ":clientID/board/:boardID/bulk/:op"),
  ...route("routes/_app+/api.grid", "routes/_app+/_layout", "api/grid"),
  ...route("routes/_app+/admin+/_layout", "routes/_app+/_layout", "admin"),
  ...route("routes/_app+/admin+/_index", "routes/_app+/admin+/_layout", undefined, { index: true }),
  ...route("routes/_app+/admin+/users.$id", "routes/_app+/admin+/_layout", "users/:id"),
  ...route("routes/_app+/admin+/users.$id.more", "routes/_app+/admin+/_layout", "users/:id/*"),
  ...route("routes/_registration+/pending.($submitted)", "root", "pending/:submitted?"),
  ...route("routes/docs.($lang).intro", "root", "docs/:lang?/intro"),
  ...route("routes/Exact", "root", "Exact", { caseSensitive: true }),
  ...route("routes/exact-any", "root", ":word"),
  ...route("routes/_shared-board+/shared-board.$sharedUrl", "root", "shared-board/:sharedUrl"),
  ...route("routes/_shared-board+/shared-board.$sharedUrl_.image.$imageId", "root", "shared-board/:sharedUrl/image/:imageId"),
  ...route("routes/_shared-board+/shared-board.$sharedUrl_.zip", "root", "shared-board/:sharedUrl/zip"),
} as unknown as Manifest;

/** The same answer as Remix's own matching (matchServerRoutes is matchRoutes over the manifest's tree). */
function reference(routes: Manifest) {
  const all = Object.values(routes);
  const childrenOf = (parentId: string | undefined): AgnosticRouteObject[] =>
    all
      .filter((r) => r.parentId === parentId)
      .map((r) =>
        r.index
          ? { id: r.id, path: r.path, index: true, caseSensitive: r.caseSensitive }
          : { id: r.id, path: r.path, caseSensitive: r.caseSensitive, children: childrenOf(r.id) },
      );
  const tree = childrenOf(undefined);
  return (pathname: string) => {
    const path = pathname.endsWith(".data") ? pathname.replace(/\.data$/, "").replace(/^\/_root$/, "/") : pathname;
    return matchRoutes(tree, path)?.at(-1)?.route.id ?? "other";
  };
}

const paths = [
  "/",
  "/_root.data",
  "/login",
  "/login/",
  "/LOGIN",
  "/login.data",
  "/dashboard",
  "/dashboard.data",
  "/client/12",
  "/client/12/",
  "/client/new",
  "/client/12/edit",
  "/client/12/edit/more",
  "/5/board/abc",
  "/5/board/abc/bulk/move",
  "/5/board/abc/bulk/move.data",
  "/client/board/new",
  "/api/grid",
  "/admin",
  "/admin/",
  "/admin/users/7",
  "/admin/users/7/a/b",
  "/pending",
  "/pending/yes",
  "/pending/yes/no",
  "/docs/intro",
  "/docs/en/intro",
  "/docs/en/other",
  "/Exact",
  "/exact",
  "/anything",
  "/shared-board/T7nenmUQuxrr:GKkW4X5AVN4JYNnnm5ybDOtBlhGNWuZQPKfEYt17O0c",
  "/shared-board/a%3Ab",
  "/shared-board/a%2Fb",
  "/shared-board/abc/image/3",
  "/shared-board/abc/zip",
  "/shared-board/abc/zip/x",
  "/a b/c",
  "/x/y/z",
  "//double//slash",
];

describe("route ids for metrics and the access log", () => {
  it("names every path by the route Remix's own matching picks", () => {
    const fast = routeIds(manifest);
    const slow = reference(manifest);
    const answers = paths.map((p) => [p, fast(p)]);
    expect(answers).toEqual(paths.map((p) => [p, slow(p)]));
    // and the answers are the ones meant, not merely the same
    expect(Object.fromEntries(answers)).toMatchObject({
      "/": "routes/_index",
      "/_root.data": "routes/_index",
      "/client/new": "routes/_app+/client.new",
      "/client/12/edit": "routes/_app+/client.$id_.edit",
      "/5/board/abc/bulk/move.data": "routes/_app+/$clientID.board.$boardID_.bulk.$op",
      "/admin": "routes/_app+/admin+/_index",
      "/pending": "routes/_registration+/pending.($submitted)",
      "/docs/intro": "routes/docs.($lang).intro",
      "/Exact": "routes/Exact",
      "/exact": "routes/exact-any",
      "/x/y/z": "routes/$",
    });
  });

  it("logs a path without its query and without a token's segment", () => {
    expect(loggedPath("/shared-board/T7nenmUQuxrr:GKkW4X5A/image/164?after=3")).toBe("/shared-board/[token]/image/164");
    expect(loggedPath("/shared-media/T7nenmUQuxrr:GKkW4X5A/1/thumbs~ab.webp")).toBe("/shared-media/[token]/1/thumbs~ab.webp");
    expect(loggedPath("/auth/GKkW4X5AVN4JYNnnm5yb?next=/client/12")).toBe("/auth/[token]");
    expect(loggedPath("/exports/abc")).toBe("/exports/[token]");
    expect(loggedPath("/client/12?q=secret")).toBe("/client/12");
  });
});
