// The HTTP front (server/*.ts) bundled into build/server.js for production; `npm run dev` runs it with tsx instead.
// Packages stay imports (node_modules is there at run time); the app itself is reached through the server build.
import { build } from "esbuild";

await build({
  entryPoints: ["server/index.ts"],
  outfile: "build/server.js",
  bundle: true,
  packages: "external",
  platform: "node",
  format: "esm",
  target: "node20",
  sourcemap: "linked",
  logLevel: "warning",
});
