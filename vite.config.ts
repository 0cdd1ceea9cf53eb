import { vitePlugin as remix } from "@remix-run/dev";
import { flatRoutes } from "remix-flat-routes";
import { defineConfig } from "vite";
import tsconfigPaths from "vite-tsconfig-paths";

declare module "@remix-run/node" {
  interface Future {
    v3_singleFetch: true;
  }
}

export default defineConfig({
  plugins: [
    remix({
      // Routes grouped by feature in `+` folders (remix-flat-routes, as the Epic Stack does): a file in `_app+/_bulk+/`
      // is the route `_app._bulk.<name>`, and a pathless group (`_bulk`) only gathers a feature's routes and their
      // helpers. Files that are not routes live beside them: `*.server.ts` helpers, tests, dotfiles.
      ignoredRouteFiles: ["**/*"],
      routes: async (defineRoutes) =>
        flatRoutes("routes", defineRoutes, {
          ignoredRouteFiles: ["**/.*", "**/*.server.ts", "**/*.test.{ts,tsx}", "**/__*.*"],
        }),
      future: {
        v3_fetcherPersist: true,
        v3_relativeSplatPath: true,
        v3_throwAbortReason: true,
        v3_singleFetch: true,
        // Off: with it, every document request matches the whole route tree twice more to trim the manifest
        // (about 5% of the server's CPU under load, bench P10); the full manifest costs ~3 KB gzipped per page.
        v3_lazyRouteDiscovery: false,
      },
    }),
    tsconfigPaths(),
  ],
  build: {
    // Native modules stay outside the server bundle.
    rollupOptions: { external: ["better-sqlite3", "sharp", "pg", "nodemailer"] },
  },
});
