import { vitePlugin as remix } from "@remix-run/dev";
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
