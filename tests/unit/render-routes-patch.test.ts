import { createElement, useContext } from "react";
import { renderToString } from "react-dom/server";
import { createStaticHandler, type AgnosticRouteObject } from "@remix-run/router";
import { Outlet, RemixServer, useParams } from "@remix-run/react";
import { UNSAFE_DataRouterContext } from "react-router";
import { describe, expect, it } from "vitest";

/**
 * patches/@remix-run+react+2.17.5.patch and patches/react-router-dom+6.30.4.patch (docs/decisions/0024): Remix's
 * render makes its routes once per build and React Router converts them once, so the route matching the render does
 * finds its ranked branches kept instead of flattening and ranking the whole tree on every request. Without the
 * patches every render builds new arrays and the first test fails.
 */
type Build = ReturnType<typeof build>;
const seen: unknown[] = [];

function Root() {
  return createElement("main", null, createElement(Outlet));
}
function Page() {
  seen.push(useContext(UNSAFE_DataRouterContext)?.router.routes);
  return createElement("p", null, `page ${useParams().x ?? "a"}`);
}

const route = (id: string, path: string, parentId?: string) => ({
  id,
  path,
  parentId,
  module: `/${id}.js`,
  hasAction: false,
  hasLoader: false,
  hasClientAction: false,
  hasClientLoader: false,
  hasErrorBoundary: false,
});
function build() {
  return {
    manifest: {
      routes: { root: route("root", ""), a: route("a", "a", "root"), b: route("b", "b/:x", "root") },
      entry: { module: "/entry.js", imports: [] },
      url: "/manifest.js",
      version: "1",
    },
    routeModules: { root: { default: Root }, a: { default: Page }, b: { default: Page } },
  };
}
const handlerRoutes: AgnosticRouteObject[] = [
  {
    id: "root",
    path: "",
    children: [
      { id: "a", path: "a" },
      { id: "b", path: "b/:x" },
    ],
  },
];

async function render(app: Build, path: string) {
  const url = `http://koala.test${path}`;
  const staticHandlerContext = await createStaticHandler(handlerRoutes).query(new Request(url));
  if (staticHandlerContext instanceof Response) throw new Error("the handler answered with a response");
  const context = {
    manifest: app.manifest,
    // As Remix's server runtime does: a new object of the build's route modules on every request.
    routeModules: { ...app.routeModules },
    staticHandlerContext,
    future: {},
    isSpaMode: false,
    serverHandoffString: "{}",
    renderMeta: {},
    serializeError: (error: Error) => ({ message: error.message }),
  };
  return renderToString(createElement(RemixServer, { context: context as never, url }));
}

describe("Remix's render reuses one build's routes (patched)", () => {
  it("renders each path with the same routes array, request after request", async () => {
    seen.length = 0;
    const app = build();
    expect(await render(app, "/a")).toContain("page a");
    expect(await render(app, "/b/7")).toContain("page 7");
    expect(await render(app, "/a")).toContain("page a");
    expect(seen).toHaveLength(3);
    expect(seen[0]).toBeInstanceOf(Array);
    expect(seen[1]).toBe(seen[0]);
    expect(seen[2]).toBe(seen[0]);
  });

  it("makes the routes again for another build, or when one route's module changed (a reload in development)", async () => {
    seen.length = 0;
    const first = build();
    const next = build();
    next.routeModules.b = { default: () => createElement("p", null, "page of the next build") };
    expect(await render(first, "/b/1")).toContain("page 1");
    expect(await render(next, "/b/1")).toContain("page of the next build");
    expect(await render(next, "/a")).toContain("page a");
    first.routeModules.b = { default: () => createElement("p", null, "page b, edited") };
    expect(await render(first, "/b/1")).toContain("page b, edited");
    expect(await render(first, "/a")).toContain("page a");
    expect(seen).toHaveLength(3);
    expect(seen[1]).not.toBe(seen[0]);
    expect(seen[2]).not.toBe(seen[0]);
  });
});
